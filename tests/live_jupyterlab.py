"""A real JupyterLab server for a test: headless, offline, in folders of its own, always stopped.

`jupyter lab` is started on a free port of 127.0.0.1 with a token, its root a
temporary folder, and every Jupyter and IPython folder (config, data, runtime,
settings, workspaces) pointed into a temporary one too, so nothing of the
user's is read or written. Its one kernel is this interpreter's ipykernel, with
the test's PYTHONPATH. News, update checks and terminals are off, so the page
asks nothing of the web. Stopping asks the server to shut down (which stops its
kernels), then kills whatever it started that is still alive: a kernel runs in
a session of its own, so it is followed by its process, not its group.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

START_SECONDS = 180  # a loaded 2-core machine can take a minute to start JupyterLab
STOP_SECONDS = 30
LAB_SETTINGS = {  # JupyterLab's user settings: no news, no update check (both would reach the web)
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                         "checkForUpdates": False},
}


class JupyterLabError(Exception):
    """The server did not start or answer; the message says what, with the end of its log."""


@dataclass
class JupyterLab:
    """A running server: its address and token, its log, and every process it started."""

    process: subprocess.Popen
    port: int
    token: str
    log: Path
    started: dict[int, psutil.Process] = field(default_factory=dict)

    def url(self, path: str) -> str:
        """The address of `path` ("lab/tree/x.ipynb", "api/status") with the token."""
        return f"http://127.0.0.1:{self.port}/{path}?token={self.token}"

    def log_tail(self, characters: int = 3000) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-characters:]

    def follow(self) -> None:
        """Remember every process the server has started so far (kernels leave its process group)."""
        try:
            for child in psutil.Process(self.process.pid).children(recursive=True):
                self.started.setdefault(child.pid, child)
        except psutil.NoSuchProcess:
            pass

    def api(self, path: str, method: str = "GET") -> dict:
        request = urllib.request.Request(self.url(f"api/{path}"), method=method)
        with urllib.request.urlopen(request, timeout=30) as answer:
            body = answer.read()
        return json.loads(body) if body else {}


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on now (the server is told not to try another)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def private_folders(home: Path, pythonpath: str) -> dict[str, str]:
    """The environment that keeps Jupyter, IPython and matplotlib in `home`, and the kernel spec there."""
    folders = {name: home / name for name in ("config", "data", "runtime", "ipython", "settings", "workspaces",
                                               "mpl")}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    kernel = folders["data"] / "kernels" / "python3"  # found first: JUPYTER_PREFER_ENV_PATH=0
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)", "language": "python",
        "env": {"PYTHONPATH": pythonpath},
    }), encoding="utf-8")
    for name, settings in LAB_SETTINGS.items():
        path = folders["settings"] / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings), encoding="utf-8")
    return {
        "JUPYTER_CONFIG_DIR": str(folders["config"]), "JUPYTER_DATA_DIR": str(folders["data"]),
        "JUPYTER_RUNTIME_DIR": str(folders["runtime"]), "IPYTHONDIR": str(folders["ipython"]),
        "JUPYTERLAB_SETTINGS_DIR": str(folders["settings"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(folders["workspaces"]), "MPLCONFIGDIR": str(folders["mpl"]),
        "JUPYTER_PLATFORM_DIRS": "1", "PYTHONPATH": pythonpath,
        "JUPYTER_PREFER_ENV_PATH": "0",  # or a venv's own kernels/python3 (argv "python", from PATH) wins
    }


def start(root: Path, home: Path, pythonpath: str) -> JupyterLab:
    """`jupyter lab` serving `root`, its folders in `home`; a JupyterLabError if it does not answer."""
    port, token = free_port(), os.urandom(16).hex()
    log = home / "jupyter-lab.log"
    env = {**os.environ, **private_folders(home, pythonpath)}
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}", "--ServerApp.terminals_enabled=False",
        "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",  # the default one asks PyPI what extensions there are
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: the test runs cells with its commands
    ] + (["--allow-root"] if os.geteuid() == 0 else [])  # a container's tests often run as root
    with open(log, "w", encoding="utf-8") as out:
        process = subprocess.Popen(command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    lab = JupyterLab(process, port, token, log)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise JupyterLabError(f"jupyter lab exited with {process.returncode} before answering:\n{lab.log_tail()}")
        try:
            lab.api("status")
            return lab
        except OSError:
            time.sleep(0.5)
    stop(lab)
    raise JupyterLabError(f"jupyter lab did not answer on port {port} within {START_SECONDS} s:\n{lab.log_tail()}")


def stop(lab: JupyterLab) -> list[str]:
    """Stop the server and everything it started; what had to be killed, as 'pid name' lines."""
    lab.follow()
    try:
        lab.api("shutdown", method="POST")  # the server stops its kernels, then itself
    except OSError:
        lab.process.terminate()
    try:
        lab.process.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        lab.process.kill()
        lab.process.wait(STOP_SECONDS)
    _, alive = psutil.wait_procs(list(lab.started.values()), timeout=STOP_SECONDS)
    killed = []
    for process in alive:
        try:
            killed.append(f"{process.pid} {process.name()}")
            process.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=STOP_SECONDS)
    return killed
