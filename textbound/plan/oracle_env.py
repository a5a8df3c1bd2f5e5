"""Which oracles judge a run: the oracle libraries installed here when none is older than
textbound.oracles.SUPPORTED_VERSIONS; else those of an *oracle environment*, another Python whose
libraries are the supported ones, where the command runs again while the implementation under
test stays here, served over JSON lines (textbound.adapters.serve). An engine's pins
(transformers 5.20.2 beside vLLM) then never judge, and never need to change.

The oracle environment is ``$TEXTBOUND_ORACLE_PYTHON`` (ORACLE_PYTHON_ENV) when set; else a virtual
environment cached under ``$TEXTBOUND_CACHE/oracle-envs/``, built once by pip from the registry:
textbound from where this one was installed, with the supported versions pinned. Either is asked
for its versions first, and refused (one line) when they are not the supported ones.

    >>> oracles_apart()  # doctest: +SKIP
    OracleEnvironment(python='~/.cache/textbound/oracle-envs/tokenizers-0.23.3+transformers-5.24.0-1f0c…/bin/python',
                      versions={'tokenizers': '0.23.3', 'transformers': '5.24.0'},
                      unsupported_here=['tokenizers 0.22.2', 'transformers 5.20.2'])

``pip_install`` (and PipError) is also how ``compare --oracle-versions`` installs its overlays.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import distributions
from pathlib import Path
from urllib.parse import unquote, urlparse

from textbound.oracles import SUPPORTED_VERSIONS, installed_versions, unsupported

from ..families.cache import default_cache_dir, publish_built

ORACLE_PYTHON_ENV = "TEXTBOUND_ORACLE_PYTHON"
ENVIRONMENTS = "oracle-envs"  # the cache's folder of built oracle environments
PIP_TIMEOUT_SECONDS = 600  # one pip install of a few packages
BUILD_TIMEOUT_SECONDS = 3600  # an oracle environment: textbound's dependencies, 430 MB
STEP_TIMEOUT_SECONDS = 60  # a probe of a python, or an empty venv made
ERROR_LINES = 3  # of pip's (or a probe's) stderr kept in an error
# What an oracle environment's python prints: its oracle libraries' versions, as installed_versions gives.
PROBE = "import json; from textbound.oracles import installed_versions; print(json.dumps(installed_versions()))"


class PipError(Exception):
    """pip could not install what it was asked; the message gives the command's packages and pip's words."""


class OracleEnvError(Exception):
    """No oracle environment can judge this run; the message (one line) says why and how to provide one."""


@dataclass(frozen=True)
class OracleEnvironment:
    python: str
    versions: dict[str, str | None]  # its oracle libraries, as installed_versions gives them
    unsupported_here: list[str]  # why the libraries here do not judge: "transformers 5.20.2"


def pip_install(packages: list[str], *options: str, python: Path | None = None,
                timeout: float = PIP_TIMEOUT_SECONDS) -> None:
    """``pip install --quiet OPTIONS PACKAGES`` by this environment's pip, into ``python``'s
    environment when given (else this one); PipError naming the packages, with pip's last words.

    >>> pip_install(["tokenizers==0.22.1"], "--no-deps", "--target", "overlay")  # doctest: +SKIP
    """
    command = [sys.executable, "-m", "pip", *(("--python", str(python)) if python else ()), "install", "--quiet",
               *options, *packages]
    what = f"pip install {' '.join(packages)}"
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise PipError(f"{what}: no answer within {timeout:.0f} s") from None
    if done.returncode != 0:
        raise PipError(f"{what}: {_last_words(done)}")


def oracles_apart() -> OracleEnvironment | None:
    """None when the oracle libraries here judge; else the oracle environment that does (found,
    given, or built now). OracleEnvError when there is none."""
    here = unsupported(installed_versions())
    if not here:
        return None
    given = os.environ.get(ORACLE_PYTHON_ENV, "").strip()
    python = given or str(_cached_environment(here))
    versions = _probe(python, given)
    if short := unsupported(versions):
        raise OracleEnvError(f"{_named(python, given)} has {' and '.join(short)}: {_supported()}")
    return OracleEnvironment(python, versions, here)


def judge_apart(environment: OracleEnvironment, argv: list[str], served: dict[str, str]) -> int:
    """The exit status of ``textbound ARGV`` run by the oracle environment's python, with ``served``'s
    variables (textbound.adapters.serve.served_environment: the implementation served from here).
    It runs in a session of its own, so that Ctrl-C and SIGTERM reach it once, from here: it stops
    as check stops on them, report written, and its workers and served engines are its to end."""
    child = subprocess.Popen([environment.python, "-m", "textbound.cli", *argv], env={**os.environ, **served},
                             start_new_session=True)
    previous = {signum: signal.signal(signum, lambda number, _frame: child.send_signal(number))
                for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        code = child.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return code if code >= 0 else 128 - code


def textbound_source() -> tuple[list[str], str]:
    """pip's arguments that install the textbound running here, and a fingerprint of its installed
    files ("" where the install follows its source: editable, or a registry's release).

    >>> textbound_source()  # after pip install -e ~/textbound   # doctest: +SKIP
    (['-e', '/home/me/textbound'], '')
    """
    # pip's record of the install, not a source folder's textbound.egg-info found first from within it
    found = sorted(distributions(name="textbound"), key=lambda d: d.read_text("direct_url.json") is None)
    if not found:
        raise OracleEnvError("textbound runs here without being installed, so no oracle environment can be "
                             f"built from it: set ${ORACLE_PYTHON_ENV}")
    installed = found[0]
    direct = json.loads(installed.read_text("direct_url.json") or "null")  # PEP 610: where pip installed it from
    if direct is None:
        return [f"textbound=={installed.version}"], ""
    url = direct["url"]
    if direct.get("dir_info", {}).get("editable"):
        return ["-e", unquote(urlparse(url).path)], ""
    if "vcs_info" in direct:
        return [f"textbound @ {direct['vcs_info']['vcs']}+{url}@{direct['vcs_info']['commit_id']}"], ""
    # A folder or an archive: what was copied from it may differ from what it holds now.
    return [f"textbound @ {url}"], hashlib.sha256((installed.read_text("RECORD") or "").encode()).hexdigest()


@dataclass(frozen=True)
class Build:
    """The cached oracle environment of the textbound running here: its folder, and what pip installs in it."""

    folder: Path
    packages: list[str]  # textbound from where this one was installed, the supported versions pinned

    @property
    def python(self) -> Path:
        return self.folder / "bin" / "python"


def cached_build() -> Build:
    """The oracle environment's Build, named by a hash of what goes into it (this Python too).

    >>> cached_build().folder.name  # doctest: +SKIP
    'tokenizers-0.23.3+transformers-5.24.0-44d4cee23443'
    """
    source, fingerprint = textbound_source()
    pins = [f"{name}=={version}" for name, version in SUPPORTED_VERSIONS.items()]
    key = hashlib.sha256(json.dumps([source, fingerprint, pins, sys.version, sys.base_prefix]).encode()).hexdigest()
    return Build(default_cache_dir() / ENVIRONMENTS / f"{'+'.join(pins).replace('==', '-')}-{key[:12]}",
                 [*source, *pins])


def _cached_environment(here: list[str]) -> Path:
    """The python of the cached oracle environment, built first (a venv, then pip) if missing."""
    build = cached_build()
    if build.folder.is_dir():
        return build.python

    def install(staging: Path) -> None:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(staging)], check=True,
                       capture_output=True, timeout=STEP_TIMEOUT_SECONDS)
        pip_install(build.packages, python=Build(staging, build.packages).python, timeout=BUILD_TIMEOUT_SECONDS)

    packages = " ".join(build.packages)
    print(f"textbound: {' and '.join(here)} here: {_supported()}; building their environment once "
          f"(pip from the registry: {packages}) in {build.folder}", file=sys.stderr)
    try:
        publish_built(build.folder, install)
    except (PipError, subprocess.SubprocessError) as exc:
        raise OracleEnvError(f"{' and '.join(here)} here: {_supported()}, and no environment of theirs is cached "
                             f"nor could be built ({exc}); build one where a registry is reachable (python3 -m venv "
                             f"ENV && {shlex.join(['ENV/bin/pip', 'install', *build.packages])}) and name its python, "
                             f"ENV/bin/python, in ${ORACLE_PYTHON_ENV}") from None
    return build.python


def _probe(python: str, given: str) -> dict[str, str | None]:
    """The oracle libraries' versions of ``python``'s environment; OracleEnvError when it cannot say."""
    try:
        done = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, timeout=STEP_TIMEOUT_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OracleEnvError(f"{_named(python, given)} cannot be run: {exc}") from None
    if done.returncode != 0:
        raise OracleEnvError(f"{_named(python, given)} cannot serve as the oracle environment: {_last_words(done)}")
    return json.loads(done.stdout)


def _last_words(done: subprocess.CompletedProcess) -> str:
    """The last lines of a failed command's stderr; pip's ERROR lines when it has some (its last lines
    may only point up at them, from a build subprocess).

    >>> _last_words(subprocess.CompletedProcess([], 1, "", "  ERROR: No matching distribution\\n  See above\\n"))
    'ERROR: No matching distribution'
    """
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    return " | ".join((errors or lines)[-ERROR_LINES:]) or f"exit {done.returncode}"


def _named(python: str, given: str) -> str:
    return f"${ORACLE_PYTHON_ENV} ({python})" if given else f"the oracle environment {python}"


def _supported() -> str:
    """``"the oracles judge at tokenizers 0.23.3 and transformers 5.24.0 or newer"``."""
    return f"the oracles judge at {' and '.join(f'{n} {v}' for n, v in SUPPORTED_VERSIONS.items())} or newer"
