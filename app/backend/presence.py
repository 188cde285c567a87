"""Who is on a class server now, and what each student costs the server: every run of a
student's page says so here (`seen`), with the Streamlit sessions (tabs) it came from. When
none of a student's tabs is connected any more for GRACE_S, their own sandbox is stopped (a
thread checks every CHECK_S): nothing of a student's is kept once they are gone, however long
TLENS_OWN_IDLE_S is. Each run's CPU time in the server is charged to its student (`accounted`),
with an estimate of what their session keeps in the server's memory, for the class's status
line (`rows`).

    presence.seen(engines, key, user, address)      # every run of a student's page
    with presence.accounted(key): page.run()        # the run's server CPU, charged to them
    presence.charge(key, cpu_s)                     # a compile's server CPU outside the run (its thread, its parse)
    presence.rows(engines, me, teacher)             # your row (a teacher: every student's)
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading
import time

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

CHECK_S = 5.0            # how often the tabs of the students with a sandbox are looked at
GRACE_S = 10.0           # a student none of whose tabs is connected this long is gone
_MAX_STUDENTS = 10_000
MEASURE_EVERY_S = 5.0    # what a session keeps is estimated at the end of a run, at most this often


@dataclasses.dataclass
class _Student:
    tabs: dict[str, float] = dataclasses.field(default_factory=dict)    # Streamlit session id -> last run
    cpu_s: float = 0.0
    runs: int = 0
    held_bytes: int = 0
    measured: float = float("-inf")           # when held_bytes was estimated
    gone_since: float | None = None
    user: str = ""                            # whose workspace (its history is on the host's disk)


_lock = threading.Lock()
_students: dict[str, _Student] = {}
_reaper: list[threading.Thread] = []
_inside = threading.local()


def seen(engines, key: str, user: str, address: str) -> None:
    """A run of `key`'s page (`user`: whose workspace, app/state/workspace.py; a name the proxy
    gave starts `user:`): their tab noted, their own sandbox started if the proxy names them
    (a cookie's identity gets one at its first compile: student_sandboxes.Gate)."""
    ctx = get_script_run_ctx()
    now = time.monotonic()
    with _lock:
        student = _students.setdefault(key, _Student())
        student.user = user
        if ctx is not None:
            student.tabs[ctx.session_id] = now
            if len(student.tabs) > 64:                      # a student's tabs, not the internet's
                del student.tabs[min(student.tabs, key=student.tabs.get)]
        student.gone_since = None
        if len(_students) > _MAX_STUDENTS:
            for old in sorted(_students, key=lambda k: max(_students[k].tabs.values(), default=0))[:1000]:
                _students.pop(old, None)
        if not _reaper:
            _reaper.append(threading.Thread(target=_watch, args=(engines,), daemon=True, name="tlens-presence"))
            _reaper[0].start()
    engines.get("").prewarm(key, address, named=user.startswith("user:"))


def _connected(session_id: str) -> bool:
    """Whether a Streamlit session (a tab) is connected now; True where there is no runtime to ask."""
    try:
        from streamlit.runtime import Runtime
        return Runtime.instance().is_active_session(session_id)
    except (RuntimeError, AttributeError):
        return True


def gone(now: float | None = None, connected=_connected) -> list[str]:
    """The students none of whose tabs has been connected for GRACE_S (forgotten here)."""
    now = time.monotonic() if now is None else now
    out = []
    with _lock:
        for key, student in list(_students.items()):
            if any(connected(sid) for sid in student.tabs):
                student.gone_since = None
            elif student.gone_since is None:
                student.gone_since = now
            elif now - student.gone_since >= GRACE_S:
                out.append(key)
                del _students[key]
    return out


def _watch(engines) -> None:
    while True:
        time.sleep(CHECK_S)
        try:
            for key in gone():
                for engine in engines.started():
                    engine.forget(key)
        except Exception:  # noqa: BLE001 - the watch goes on; a failed stop is retried by the idle reaper
            pass


@contextlib.contextmanager
def accounted(key: str):
    """The server CPU of the run inside, charged to `key`'s student, and what their session keeps
    (a fragment's run inside a full run is the full run's: counted once)."""
    if getattr(_inside, "on", False):
        yield
        return
    _inside.on, t0 = True, time.thread_time()
    try:
        yield
    finally:
        _inside.on = False
        spent = time.thread_time() - t0
        with _lock:
            student = _students.setdefault(key, _Student())
            student.cpu_s += spent
            student.runs += 1
            now = time.monotonic()
            measure = now - student.measured >= MEASURE_EVERY_S
            if measure:
                student.measured = now
        if measure:          # a walk of the session's state: not on every keystroke's run
            held = held_bytes(dict(st.session_state))
            with _lock:
                _students.setdefault(key, _Student()).held_bytes = held


def charge(key: str, cpu_s: float) -> None:
    """Server CPU spent on `key`'s compile outside their page's run (the compile's own thread, the
    parse of the worker's answer): theirs too."""
    if cpu_s > 0:
        with _lock:
            _students.setdefault(key, _Student()).cpu_s += cpu_s


def held_bytes(root, budget: int = 20_000) -> int:
    """An estimate of the bytes of text and data reachable from `root` (strings, bytes, and the
    containers and dataclasses that hold them), each object once, at most `budget` objects."""
    seen_ids, stack, total = set(), [root], 0
    while stack and budget > 0:
        obj = stack.pop()
        if id(obj) in seen_ids:
            continue
        seen_ids.add(id(obj))
        budget -= 1
        if isinstance(obj, (str, bytes, bytearray)):
            total += len(obj)
        elif isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            stack.extend(getattr(obj, f.name, None) for f in dataclasses.fields(obj))
        else:
            total += 64
    return total


def rows(engines, me: str = "", teacher: bool = False, results=None) -> list[dict]:
    """One row per student seen: the server CPU for their runs and what their session keeps,
    what their results hold of the shared result cache (`results`, the Lens's ResultCache) and
    of the launch store, their history on the host's disk, and their own sandbox's memory (its
    cgroup's) where they have one. A student is shown their own row only (no label of another,
    hashed or not: a class roster would reverse a hash); a teacher (settings.teachers) every
    student's, by name."""
    sandboxes = {}
    for engine in engines.started():
        if engine.own is not None:
            sandboxes.update(engine.own.sessions())
    with _lock:
        students = {k: dataclasses.replace(s, tabs=dict(s.tabs)) for k, s in _students.items()}
    out = []
    for key in sorted(set(students) | set(sandboxes)):
        if key != me and not teacher:
            continue
        s, own = students.get(key, _Student()), sandboxes.get(key)
        cgroup = getattr(own["worker"], "cgroup", None) if own else None
        memory = cgroup.memory_bytes() if cgroup is not None else None
        out.append({"student": f"{_short(key)} (you)" if key == me else _short(key), "tabs": sum(_connected(t) for t in s.tabs), "runs": s.runs,
                    "server CPU s": round(s.cpu_s, 2), "server KB (session)": round(s.held_bytes / 1024, 1),
                    "sandbox": ("compiling" if own["busy"] else f"idle {own['idle_s']:.0f} s") if own else "none",
                    "sandbox MB": round(memory / 2**20, 1) if memory is not None else None,
                    **_stored(key, s.user, engines, results)})
    return out


def _stored(key: str, user: str, engines, results) -> dict:
    """What a student's answers hold where they outlive the page: the shared result cache's disk
    level, the launch store (a big result's launches) and their history; each bounded by its
    share (docs/05-sandbox-and-threat-model.md, its table of bounds)."""
    from inspectors.base import settings as settings_mod
    from inspectors.session import files, records
    store = next((e.launch_store for e in engines.started() if getattr(e, "launch_store", None) is not None), None)
    root = settings_mod.load().workspace_dir
    history = records.history_store(files.user_folder(root, user) if user else root)
    mb = lambda n: round(n / 2**20, 2)     # noqa: E731
    return {"cache MB": mb(results.owned_bytes(key)) if results is not None else None,
            "stored launches MB": mb(store.owned_bytes(key)) if store is not None else None,
            "history MB": mb(history.bytes_used())}


def is_teacher(who: str, settings) -> bool:
    """Whether `who` (services.who(): "user:user:NAME" for a proxy's user, "user:browser:…" for a
    browser's cookie, "session:…" on a one-user server) is a teacher named in the settings; a
    cookie or a session never is."""
    prefix = "user:user:"
    return who.startswith(prefix) and who[len(prefix):] in settings.teachers


def _short(key: str) -> str:
    """A student's key as the status line shows it: a proxy's name whole, a cookie's token cut."""
    kind, _, rest = key.partition(":")
    if rest.startswith("browser:"):
        return "browser " + rest[len("browser:"):][:6] + "…"
    if rest.startswith("user:"):
        return rest[len("user:"):]
    return rest or kind