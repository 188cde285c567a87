"""One compile engine per configured Triton version (inspectors.base.triton_installs), each started on
first use, and the request routed by its `triton_version`."""
from __future__ import annotations

import threading

from inspectors.base import settings as settings_mod
from inspectors.base.errors import CompileError
from inspectors.base.result import CompileRequest, CompileResult
from inspectors.base.triton_installs import TritonEnv
from inspectors.compile.engine import Engine


class Engines:
    """One Engine per configured Triton version (inspectors.base.triton_installs.configured()), each
    started on first use; the server's own version gets `workers` workers, every extra version
    `extra_workers` (default `TLENS_VERSION_WORKERS`, 1: each worker holds a torch and a Triton in memory).

        engines = Engines()
        engines.versions()                                   # ['3.6.0', '3.9.0']
        engines.compile(CompileRequest(source, triton_version="3.6.0"))
    """

    def __init__(self, settings: settings_mod.Settings | None = None, envs: dict[str, TritonEnv] | None = None,
                 extra_workers: int | None = None, **engine_kw):
        from inspectors.base import triton_installs
        self.settings = settings or settings_mod.load()
        self.envs = dict(triton_installs.configured() if envs is None else envs)
        self.own = next((v for v, e in self.envs.items() if e.own), "")
        self.extra_workers = max(1, extra_workers or self.settings.version_workers)
        self.engine_kw = engine_kw
        self._engines: dict[str, Engine] = {}
        self._lock = threading.Lock()

    def versions(self) -> list[str]:
        return list(self.envs)

    def get(self, version: str = "") -> Engine:
        """The engine of `version` ("" = the server's own); KeyError naming the configured ones."""
        version = version or self.own
        if version not in self.envs:
            raise KeyError(f"Triton {version} is not set up on this server (set up: "
                           f"{', '.join(self.envs) or 'none'}); run make setup-versions TRITON_VERSIONS={version}")
        with self._lock:
            if version not in self._engines:
                env = self.envs[version]
                kw = dict(self.engine_kw)
                if not env.own:
                    kw["workers"] = self.extra_workers
                self._engines[version] = Engine(self.settings, triton=env, **kw)
            return self._engines[version]

    def compile(self, request: CompileRequest, **kw) -> CompileResult:
        try:
            engine = self.get(request.triton_version)
        except KeyError as e:
            return CompileResult(error=CompileError("usage", e.args[0], request.filename, None))
        return engine.compile(request, **kw)

    def started(self) -> list[Engine]:
        """The engines started so far (one per Triton version asked for)."""
        with self._lock:
            return list(self._engines.values())

    def close(self) -> None:
        with self._lock:
            engines, self._engines = list(self._engines.values()), {}
        for e in engines:
            e.close()
