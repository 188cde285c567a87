"""The JIT's entry points, patched while a LaunchRecorder records (inspectors.compile.triton_shim):
`@triton.autotune` launches every config once instead of timing them on a GPU, and each launch
recorded keeps what it was called with (its grid, its tensors' sizes, its integers:
inspectors.compile.launch_call; the first call's, and how many calls the step made of it),
which the JIT's cache hook does not see."""
from __future__ import annotations

from triton.runtime import autotuner
from triton.runtime.jit import JITFunction

from inspectors.compile import launch_call


def patch_entry_points(recorder):
    """Installs both patches for `recorder`; returns the function that takes them out."""
    original_tune, original_run = autotuner.Autotuner.run, JITFunction.run

    def run_every_config(self, *args, **kwargs):
        # as Triton's run: arguments by name (early_config_prune reads them), best_config set after
        self.nargs = dict(zip(self.arg_names, args))
        configs = self.prune_configs(kwargs) if len(self.configs) > 1 else self.configs
        kept = f" ({len(configs)} of {len(self.configs)} kept by its pruning)" if len(configs) < len(self.configs) else ""
        for i, config in enumerate(configs):
            recorder._label_prefix = f"autotune config {i + 1}/{len(configs)}{kept}: {config}"
            merged = {**kwargs, **config.all_kwargs()}
            self.fn.run(*args, **merged)
        recorder._label_prefix = ""
        # nothing is timed here: the first surviving config stands for the choice (libraries read it)
        self.best_config = configs[0]

    def run_recording_call(fn, *args, grid, warmup, **kwargs):
        before, recorder.hit = len(recorder.launches), None
        try:
            return original_run(fn, *args, grid=grid, warmup=warmup, **kwargs)
        finally:
            if len(recorder.launches) > before and not recorder.launches[-1].call:
                recorder.launches[-1].call = {**launch_call.of_jit(fn, args, kwargs, grid), "calls": 1}
            elif recorder.hit is not None and recorder.hit.call:      # the same specialization again
                recorder.hit.call["calls"] = recorder.hit.call.get("calls", 1) + 1

    autotuner.Autotuner.run, JITFunction.run = run_every_config, run_recording_call

    def undo() -> None:
        autotuner.Autotuner.run, JITFunction.run = original_tune, original_run
    return undo
