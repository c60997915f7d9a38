#!/usr/bin/env python3
"""A learner at a browser, for deploy's TestJupyterHub: logs in to the hub
through its login form, starts (or finds) their server, and works in it the
way JupyterLab does, over HTTP alone: the contents API to open and save
notebooks, the sessions API to open a kernel (the default one, as New
Notebook does), the kernel's websocket to run cells, the hub's API (with
the learner's own cookie and XSRF token) to stop and start the server.

    learner.py HUB_URL USER PASSWORD < STEPS.json > RESULT.json

STEPS is a list of steps, each a dict with "do" and its arguments; RESULT a
list of what each step found, in order, for the Go test to assert on. A
step that fails ends the run with {"error": ...} as its result (exit 1).

Steps:
  {"do": "start"}                          log in (once) and start the server; waits until ready
  {"do": "stop"}                           stop the server, waiting until it is gone
  {"do": "kernelspecs"}                    the server's kernelspecs: default and names
  {"do": "list", "path": P}                names in folder P
  {"do": "read", "path": P}                a file's text (or a notebook as JSON text)
  {"do": "run", "path": P, "replace": {OLD: NEW}, "cells": [I, ...], "save": true}
        open notebook P, replace OLD by NEW in every code cell's source (a
        learner's predictions), run its code cells numbered I (from 0; all
        when absent) in a session of the default kernel, put the outputs in,
        save it
  {"do": "new"}                            New Notebook in notebooks/: its path and the kernel it opened with
  {"do": "put", "path": P, "text": T}      upload a file (a notebook another learner sent)
  {"do": "rename", "path": P, "to": Q}     rename in the file browser
  {"do": "get_other", "user": U}           GET U's server's contents with this learner's cookie: the status
Standard library plus requests and websocket-client (requirements.txt).
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from urllib.parse import quote, urlparse

import requests
import websocket

TIMEOUT = 60


class Learner:
    def __init__(self, hub: str, user: str, password: str):
        self.hub = hub.rstrip("/")
        self.user = user
        self.password = password
        self.s = requests.Session()
        self.logged_in = False

    # ------------------------------------------------------------ plumbing
    def _xsrf(self, path: str = "/hub/") -> dict:
        # Tornado's XSRF token is the _xsrf cookie; the hub and the server
        # each set their own (on /hub/ and /user/NAME/).
        for c in self.s.cookies:
            if c.name == "_xsrf" and path.startswith(c.path or "/"):
                best = c
        try:
            return {"X-XSRFToken": best.value}
        except NameError:
            return {}

    def _check(self, r: requests.Response, what: str) -> requests.Response:
        if r.status_code >= 400:
            raise RuntimeError(f"{what}: HTTP {r.status_code} {r.url}: {r.text[:300]}")
        return r

    def user_url(self, path: str = "") -> str:
        return f"{self.hub}/user/{quote(self.user)}/{path}"

    def ensure(self) -> None:
        """Logs in (a new browser session: no cookies yet) and opens the
        server once, whose OAuth dance sets the server's cookie."""
        if not self.logged_in:
            self.login()
            self._check(self.s.get(self.user_url("lab"), timeout=TIMEOUT), "opening JupyterLab")

    def api(self, method: str, path: str, what: str, **kw) -> requests.Response:
        self.ensure()
        url = self.user_url("api/" + path)
        headers = self._xsrf(urlparse(url).path)
        r = self.s.request(method, url, headers=headers, timeout=TIMEOUT, allow_redirects=False, **kw)
        return self._check(r, what)

    # ------------------------------------------------------------ hub
    def login(self) -> None:
        self._check(self.s.get(f"{self.hub}/hub/login", timeout=TIMEOUT), "the login page")
        r = self.s.post(f"{self.hub}/hub/login?next=", data={"username": self.user, "password": self.password},
                        headers=self._xsrf("/hub/"), timeout=TIMEOUT, allow_redirects=False)
        if r.status_code not in (302, 303):
            raise RuntimeError(f"login as {self.user}: HTTP {r.status_code}: {r.text[:300]}")
        self.logged_in = True

    def hub_api(self, method: str, path: str, what: str, ok=(200,), **kw) -> requests.Response:
        if not self.logged_in:
            self.login()
        r = self.s.request(method, f"{self.hub}/hub/api/{path}", headers=self._xsrf("/hub/"),
                           timeout=TIMEOUT, allow_redirects=False, **kw)
        if r.status_code not in ok:
            raise RuntimeError(f"{what}: HTTP {r.status_code}: {r.text[:300]}")
        return r

    def start(self) -> dict:
        if not self.logged_in:
            self.login()
        t0 = time.monotonic()
        r = self.hub_api("POST", f"users/{quote(self.user)}/server", "starting the server", ok=(201, 202, 400))
        events = []
        with self.s.get(f"{self.hub}/hub/api/users/{quote(self.user)}/server/progress", stream=True,
                        headers={"Accept": "text/event-stream"}, timeout=180) as p:
            self._check(p, "the start's progress")
            for line in p.iter_lines(decode_unicode=True):
                if not line or not line.startswith("data:"):
                    continue
                ev = json.loads(line[5:])
                events.append(ev.get("message", ""))
                if ev.get("failed"):
                    raise RuntimeError(f"the server of {self.user} failed to start: {ev.get('message')}")
                if ev.get("ready"):
                    break
        spawn_s = time.monotonic() - t0
        # The browser's way in: the server's OAuth dance sets its cookie.
        lab = self.s.get(self.user_url("lab"), timeout=TIMEOUT)
        self._check(lab, "opening JupyterLab")
        model = self.hub_api("GET", f"users/{quote(self.user)}", "the user model").json()
        return {"status": r.status_code, "spawn_s": round(spawn_s, 2), "events": events,
                "lab_url": lab.url, "default_url_ok": "/lab" in lab.url, "server": model.get("server")}

    def stop(self) -> dict:
        r = self.hub_api("DELETE", f"users/{quote(self.user)}/server", "stopping the server", ok=(202, 204))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = self.hub_api("GET", f"users/{quote(self.user)}", "the user model").json()
            if not m.get("servers"):
                return {"status": r.status_code}
            time.sleep(0.3)
        raise RuntimeError(f"the server of {self.user} did not stop within 60 s")

    # ------------------------------------------------------------ server
    def kernelspecs(self) -> dict:
        k = self.api("GET", "kernelspecs", "kernelspecs").json()
        return {"default": k["default"], "names": sorted(k["kernelspecs"])}

    def list(self, path: str) -> dict:
        m = self.api("GET", "contents/" + quote(path), f"listing {path}", params={"content": 1}).json()
        return {"names": sorted(c["name"] for c in m["content"])}

    def read(self, path: str) -> dict:
        m = self.api("GET", "contents/" + quote(path), f"reading {path}",
                     params={"content": 1, "type": "file", "format": "text"}).json()
        return {"text": m["content"], "last_modified": m["last_modified"]}

    def put(self, path: str, text: str) -> dict:
        body = {"type": "file", "format": "text", "content": text}
        self.api("PUT", "contents/" + quote(path), f"uploading {path}", json=body)
        return {"ok": True}

    def rename(self, path: str, to: str) -> dict:
        self.api("PATCH", "contents/" + quote(path), f"renaming {path}", json={"path": to})
        return {"ok": True}

    def get_other(self, user: str) -> dict:
        r = self.s.get(f"{self.hub}/user/{quote(user)}/api/contents", timeout=TIMEOUT, allow_redirects=False)
        return {"status": r.status_code, "location": r.headers.get("Location", "")}

    def new(self) -> dict:
        m = self.api("POST", "contents/notebooks", "New Notebook", json={"type": "notebook"}).json()
        sess = self.session(m["path"])
        self.api("DELETE", f"sessions/{sess['id']}", "closing the session")
        return {"path": m["path"], "kernel": sess["kernel"]["name"]}

    def session(self, path: str) -> dict:
        # What JupyterLab sends when a notebook is opened with the default
        # kernel: no kernel name.
        body = {"path": path, "type": "notebook", "name": path.rsplit("/", 1)[-1], "kernel": {}}
        return self.api("POST", "sessions", f"a session for {path}", json=body).json()

    def run(self, path: str, replace: dict | None = None, cells: list | None = None, save: bool = True) -> dict:
        nb = self.api("GET", "contents/" + quote(path), f"opening {path}", params={"content": 1}).json()["content"]
        sess = self.session(path)
        kid = sess["kernel"]["id"]
        u = urlparse(self.user_url(f"api/kernels/{kid}/channels"))
        ws_url = f"ws://{u.netloc}{u.path}?session_id={uuid.uuid4().hex}"
        cookie = "; ".join(f"{c.name}={c.value}" for c in self.s.cookies)
        ws = websocket.create_connection(ws_url, cookie=cookie, timeout=TIMEOUT,
                                         header=[f"X-XSRFToken: {self._xsrf(u.path).get('X-XSRFToken', '')}"])
        ran, errors, texts, t0 = 0, [], [], time.monotonic()
        try:
            code = [c for c in nb["cells"] if c["cell_type"] == "code"]
            for i, c in enumerate(code):
                if cells is not None and i not in cells:
                    continue
                src = c["source"] if isinstance(c["source"], str) else "".join(c["source"])
                for old, new in (replace or {}).items():
                    src = src.replace(old, new)
                c["source"] = src
                outputs, count = self.execute(ws, src)
                c["outputs"], c["execution_count"] = outputs, count
                ran += 1
                for o in outputs:
                    if o["output_type"] == "error":
                        errors.append(f"{o.get('ename')}: {o.get('evalue')}")
                    elif o["output_type"] == "stream":
                        texts.append(o["text"])
                        if o["name"] == "stderr" and ("error" in o["text"].lower() or "panic" in o["text"]):
                            errors.append(o["text"][:500])
                    elif "text/plain" in o.get("data", {}):
                        texts.append(o["data"]["text/plain"])
        finally:
            ws.close()
            self.api("DELETE", f"sessions/{sess['id']}", "closing the session")
        run_s = time.monotonic() - t0
        if save:
            self.api("PUT", "contents/" + quote(path), f"saving {path}",
                     json={"type": "notebook", "format": "json", "content": nb})
        return {"kernel": sess["kernel"]["name"], "ran": ran, "errors": errors, "text": "".join(texts), "run_s": round(run_s, 2)}

    def execute(self, ws, src: str) -> tuple[list, int | None]:
        msg_id = uuid.uuid4().hex
        ws.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": self.user,
                       "session": uuid.uuid4().hex, "date": "", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": src, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True},
        }))
        outputs, count, idle, replied = [], None, False, False
        deadline = time.monotonic() + 300
        while not (idle and replied):
            if time.monotonic() > deadline:
                raise RuntimeError(f"a cell of {self.user} ran past 300 s: {src[:80]!r}")
            m = json.loads(ws.recv())
            if m.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            t, content = m["msg_type"], m["content"]
            if m["channel"] == "shell" and t == "execute_reply":
                replied, count = True, content.get("execution_count")
            elif t == "status" and content.get("execution_state") == "idle":
                idle = True
            elif t == "stream":
                if outputs and outputs[-1]["output_type"] == "stream" and outputs[-1]["name"] == content["name"]:
                    outputs[-1]["text"] += content["text"]
                else:
                    outputs.append({"output_type": "stream", "name": content["name"], "text": content["text"]})
            elif t in ("display_data", "execute_result"):
                o = {"output_type": t, "data": content["data"], "metadata": content.get("metadata", {})}
                if t == "execute_result":
                    o["execution_count"] = content.get("execution_count")
                outputs.append(o)
            elif t == "error":
                outputs.append({"output_type": "error", "ename": content["ename"], "evalue": content["evalue"],
                                "traceback": content.get("traceback", [])})
            elif t == "clear_output":
                outputs = []
        return outputs, count


def main() -> int:
    hub, user, password = sys.argv[1:4]
    steps = json.load(sys.stdin)
    l = Learner(hub, user, password)
    results = []
    for st in steps:
        args = {k: v for k, v in st.items() if k != "do"}
        try:
            results.append(getattr(l, st["do"])(**args))
        except Exception as e:  # the Go test prints it with the step
            results.append({"error": f"{st['do']}: {type(e).__name__}: {e}"})
            json.dump(results, sys.stdout)
            return 1
    json.dump(results, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
