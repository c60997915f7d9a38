# The hub of deploy's TestJupyterHub: JupyterHub (requirements.txt's pin)
# behind configurable-http-proxy (package.json's pin), on loopback only;
# local Unix learners the test created, each server started as that user
# with the image's start command (scripts/singleuser.sh, then
# jupyterhub-singleuser) and the image's environment; the instructor's
# service token with the scopes coalesce collect needs (docs/running.md).
# The test's values come in the JSON file named by $COALESCE_HUB_SETTINGS.
import json
import os

c = get_config()  # noqa: F821 (JupyterHub's config loader defines it)
s = json.load(open(os.environ["COALESCE_HUB_SETTINGS"]))


c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = s["port"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = s["hub_port"]
c.ConfigurableHTTPProxy.command = [s["proxy"]]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{s['proxy_api_port']}"
c.ConfigurableHTTPProxy.pid_file = os.path.join(s["dir"], "proxy.pid")
c.JupyterHub.db_url = "sqlite:///" + os.path.join(s["dir"], "hub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(s["dir"], "cookie_secret")
c.JupyterHub.pid_file = os.path.join(s["dir"], "hub.pid")
c.JupyterHub.cleanup_servers = True

c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = s["password"]
c.Authenticator.allowed_users = set(s["learners"])

c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = s["cmd"]
c.Spawner.environment = s["env"]
c.Spawner.notebook_dir = s["homes"] + "/{username}/course"
c.Spawner.default_url = "/lab/tree/notebooks/index.ipynb"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 90
# Spawn requests return at once; the start is followed through the progress API.
c.JupyterHub.tornado_settings = {"slow_spawn_timeout": 0}

c.JupyterHub.services = [{"name": "grader", "api_token": s["token"]}]
c.JupyterHub.load_roles = [{
    "name": "collector",
    "scopes": ["list:users", "read:users:name", "read:servers", "servers", "access:servers"],
    "services": ["grader"],
}]
