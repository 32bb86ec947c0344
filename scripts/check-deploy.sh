#!/usr/bin/env bash
# Checks the deployment files under deploy/, or CHECK_DEPLOY_DIR (deploy/README.md):
#   - yamllint over deploy/ (config deploy/.yamllint);
#   - no drift: deploy/prometheus/spillway-rules.yaml is what `spillway policy alerts` writes
#     now, the ConfigMaps' serve.yaml (whole) and gateway.yaml (its start) what `spillway policy
#     render` writes now, from policies/reference.yaml;
#   - promtool check rules / check config;
#   - systemd-analyze verify on both units. It fails on an ExecStart binary that does not exist,
#     so it verifies copies (in a temporary directory) whose /usr/local/bin/spillway is the
#     binary given here; nothing else is changed. Any warning it prints counts as a failure
#     (it exits 0 on an unknown key). The units' flags must be in the binary's --help;
#   - the Kubernetes objects refer to each other consistently (labels, ports, names, probe
#     ports); each Deployment's --config is the ConfigMap's file where its volume is mounted
#     (mountPath, items, subPath); gateway-configmap.yaml's pool URLs that name the serve
#     Service use a port of serve-service.yaml;
#   - the units' ExecStart --host/--port (their Environment= values expanded) against the
#     ExecStartPost (any Exec*) URLs and deploy/prometheus/prometheus.yml's static targets of the
#     jobs spillway-serve and spillway-gateway;
#   - terminationGracePeriodSeconds > preStop sleep + drain budget, TimeoutStopSec > drain
#     budget (the budget is the --drain-timeout-s flag the manifests and units pass);
#   - spillway serve starts with the Deployment's arguments and the ConfigMap's serve.yaml, on
#     loopback and a free port (serve has no --check), and answers /health and /ready; spillway
#     gateway starts with its Deployment's arguments and ConfigMap (the engine URL pointed at
#     that serve), turns ready and relays a completion; both exit 0 on SIGTERM;
#   - every HTTP path the files make something GET answers 200 on the running binary: the
#     Deployments' readiness/liveness/startup probes and preStop/postStart hooks (httpGet, or a
#     URL in an exec command), the units' ExecStartPost (any Exec*) URLs, the scrape paths
#     (prometheus.io/path, prometheus.yml's metrics_path); serve's files' paths on serve, the
#     gateway's on the gateway. One exception: the gateway's /ready may also answer 503 (it is
#     503 while no engine of a pool takes work, which a manifest may mean to probe); 404 fails;
#   - inferencepool.yaml's InferenceModel modelName (or targetModels) and the model of each
#     gateway-configmap.yaml pool with an endpoint at the serve Service are the model serve
#     serves (its GET /v1/models, started as above: --model, default spillway-emulated).
# There is no Kubernetes schema check: no validator (kubeconform, kubeval) is packaged in
# Debian bookworm, and kubectl's dry runs need a cluster.
#
# Usage: scripts/check-deploy.sh [SPILLWAY_BINARY]    (default build/spillway)
# CHECK_DEPLOY_DIR: the deploy directory to check (default the repository's deploy/), e.g. a
# copy: CHECK_DEPLOY_DIR=/some/copy scripts/check-deploy.sh build/spillway (relative to the
# current directory; SPILLWAY_BINARY and CHECK_DEPLOY_POLICY are relative to the repository).
# Its .yamllint is used, else deploy/.yamllint.
# CHECK_DEPLOY_POLICY: the policy the files were generated from (default policies/reference.yaml).
# CHECK_DEPLOY_SERVE_PORT, CHECK_DEPLOY_GATEWAY_PORT: the loopback ports of those two runs
# (default 0: any free port).
# Temporary files go to a mktemp -d directory under $TMPDIR (default /tmp), removed at exit.
# YAML is read with /usr/bin/python3 (Debian's, with python3-yaml), not a python3 from PATH.
# Installs nothing. Exit: 0 every check passed; 1 a check failed; 2 a tool, the binary or
# CHECK_DEPLOY_DIR missing.
set -uo pipefail
DEPLOY=${CHECK_DEPLOY_DIR:-}
if [[ -n $DEPLOY ]]; then
  [[ -d $DEPLOY ]] || { echo "check-deploy: CHECK_DEPLOY_DIR=$DEPLOY: not a directory" >&2; exit 2; }
  DEPLOY=$(realpath "$DEPLOY")
fi
cd "$(dirname "$0")/.." || exit 2
DEPLOY=${DEPLOY:-deploy}

BIN=${1:-build/spillway}
POLICY=${CHECK_DEPLOY_POLICY:-policies/reference.yaml}
K8S=$DEPLOY/k8s
PROM=$DEPLOY/prometheus
UNITS=$DEPLOY/systemd
YAMLLINT_CONFIG=$DEPLOY/.yamllint
[[ -f $YAMLLINT_CONFIG ]] || YAMLLINT_CONFIG=deploy/.yamllint
PYTHON=/usr/bin/python3

missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$1 (Debian package $2)"); }
need yamllint yamllint
need systemd-analyze systemd
need promtool prometheus
need curl curl
if [[ ! -x $PYTHON ]]; then
  missing+=("$PYTHON (Debian package python3)")
elif ! "$PYTHON" -c 'import yaml' 2>/dev/null; then
  missing+=("$PYTHON's yaml module (Debian package python3-yaml)")
fi
if ((${#missing[@]})); then
  printf 'check-deploy: missing: %s\n' "${missing[@]}" >&2
  exit 2
fi
if [[ ! -x $BIN ]]; then
  echo "check-deploy: $BIN: not an executable (build it, or pass its path as \$1)" >&2
  exit 2
fi
BIN=$(realpath "$BIN")

tmp=$(mktemp -d -t check-deploy.XXXXXX) || exit 2
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT

passed=0
failed=0
ok() { echo "ok    $1"; passed=$((passed + 1)); }
fail() { echo "FAIL  $1"; [[ -n ${2:-} ]] && sed 's/^/      /' <<<"$2"; failed=$((failed + 1)); }
# check NAME CMD...: passes when CMD exits 0; its output is shown only on failure.
check() {
  local name=$1 out
  shift
  if out=$("$@" 2>&1); then ok "$name"; else fail "$name" "$out"; fi
}

# Reads the manifests and units (python3-yaml, which yamllint needs too).
cat >"$tmp/deploy.py" <<'PY'
import json, posixpath, re, shlex, sys, yaml
from urllib.parse import urlsplit

def docs(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]

def one(path, kind):
    return next(d for d in docs(path) if d["kind"] == kind)

def container(path):
    return one(path, "Deployment")["spec"]["template"]["spec"]["containers"][0]

def flag(args, name):
    if name not in args:
        sys.exit(f"{name} is not given: {' '.join(args)}")
    return float(args[args.index(name) + 1])

def unit_items(path):
    """The KEY=VALUE lines of a unit, in order, continuation lines joined."""
    items, cont = [], ""
    for line in open(path):
        line = line.rstrip("\n")
        if not cont and line.lstrip().startswith(("#", ";")):
            continue
        if line.endswith("\\"):
            cont += line[:-1] + " "
            continue
        m = re.match(r"^(\w+)=(.*)$", (cont + line).strip())
        cont = ""
        if m:
            items.append((m.group(1), m.group(2)))
    return items

def unit(path):
    keys = {}
    for k, v in unit_items(path):
        keys.setdefault(k, v)
    return keys

def unit_env(path):
    env = {}
    for k, v in unit_items(path):
        if k == "Environment":
            for w in shlex.split(v):
                name, eq, val = w.partition("=")
                if eq:
                    env[name] = val
    return env

def expand(s, env):
    return re.sub(r"\$\{(\w+)\}|\$(\w+)",
                  lambda m: env.get(m.group(1) or m.group(2), m.group(0)), s)

def urls(text):
    return re.findall(r"https?://[^\s\"'`;|&<>()]+", text)

def url_path(u):
    s = urlsplit(u)
    return (s.path or "/") + ("?" + s.query if s.query else "")

def arg(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default

LOOPBACK = {"127.0.0.1", "localhost", "::1"}

def host_ok(host, listen):
    """A client at `host` reaches a server listening on `listen` (on the same machine)."""
    return listen in ("0.0.0.0", "::", "") or host == listen or {host, listen} <= LOOPBACK

def handlers(c):
    """(name, handler) of a container's probes and lifecycle hooks."""
    for key in ("readinessProbe", "livenessProbe", "startupProbe"):
        if c.get(key):
            yield key, c[key]
    for key in ("preStop", "postStart"):
        h = (c.get("lifecycle") or {}).get(key)
        if h:
            yield key, h

def handler_gets(h):
    """(path, port, scheme) of each HTTP GET a probe or hook makes (httpGet, or URLs in exec)."""
    if "httpGet" in h:
        g = h["httpGet"]
        yield g.get("path", "/"), g.get("port"), g.get("scheme", "HTTP").upper()
    for w in (h.get("exec") or {}).get("command", []):
        for u in urls(str(w)):
            s = urlsplit(u)
            yield url_path(u), s.port or (443 if s.scheme == "https" else 80), s.scheme.upper()

def cmd_data(path, key):
    sys.stdout.write(one(path, "ConfigMap")["data"][key])

def cmd_args(path):
    print("\n".join(container(path)["args"]))

def cmd_unit_flags(path):
    print("\n".join(w for w in unit(path)["ExecStart"].split() if w.startswith("--")))

def cmd_timeouts(k8s, units):
    errors = []
    for name in ("serve", "gateway"):
        spec = one(f"{k8s}/{name}-deployment.yaml", "Deployment")["spec"]["template"]["spec"]
        c = spec["containers"][0]
        drain = flag(c["args"], "--drain-timeout-s")
        # The preStop's `sleep N` (an HTTP preStop, or none, counts 0: its time is its call's).
        pre = (c.get("lifecycle") or {}).get("preStop") or {}
        m = re.search(r"\bsleep\s+(\d+(?:\.\d+)?)\b",
                      " ".join(map(str, (pre.get("exec") or {}).get("command", []))))
        sleep = float(m.group(1)) if m else 0.0
        grace = spec["terminationGracePeriodSeconds"]
        print(f"{name}: terminationGracePeriodSeconds {grace} > preStop {sleep:g} + drain {drain:g}")
        if not grace > sleep + drain:
            errors.append(f"{name}-deployment.yaml: terminationGracePeriodSeconds {grace} "
                          f"not above preStop {sleep:g} s + drain {drain:g} s")
        u = unit(f"{units}/spillway-{name}.service")
        drain = flag(u["ExecStart"].split(), "--drain-timeout-s")
        stop = float(u["TimeoutStopSec"])
        print(f"spillway-{name}.service: TimeoutStopSec {stop:g} > drain {drain:g}")
        if not stop > drain:
            errors.append(f"spillway-{name}.service: TimeoutStopSec {stop:g} not above drain {drain:g} s")
        if u.get("KillSignal") != "SIGTERM":
            errors.append(f"spillway-{name}.service: KillSignal is not SIGTERM")
    return errors

def cmd_refs(k8s):
    errors = []
    def need(cond, what):
        if not cond:
            errors.append(what)
    pods = {}
    for name in ("serve", "gateway"):
        dep = one(f"{k8s}/{name}-deployment.yaml", "Deployment")
        tpl = dep["spec"]["template"]
        labels = tpl["metadata"]["labels"]
        pods[name] = (labels, tpl)
        need(dep["spec"]["selector"]["matchLabels"].items() <= labels.items(),
             f"{name}-deployment.yaml: selector does not match the pod labels")
        c = tpl["spec"]["containers"][0]
        ports = {p["name"]: p["containerPort"] for p in c["ports"]}
        ann = tpl["metadata"]["annotations"]
        need(int(ann["prometheus.io/port"]) in ports.values(),
             f"{name}-deployment.yaml: prometheus.io/port is not a container port")
        need(int(flag(c["args"], "--port")) == ports["http"],
             f"{name}-deployment.yaml: --port is not containerPort http")
        for hname, h in handlers(c):
            for path, port, scheme in handler_gets(h):
                need(port in ports or port in ports.values(),
                     f"{name}-deployment.yaml: {hname} GET {path}: port {port} is not a container "
                     f"port (name or number: {ports})")
                need(scheme == "HTTP", f"{name}-deployment.yaml: {hname} GET {path}: scheme "
                     f"{scheme}, but spillway {name} speaks plain HTTP")
        cm = one(f"{k8s}/{name}-configmap.yaml", "ConfigMap")["metadata"]["name"]
        vols = [v["configMap"]["name"] for v in tpl["spec"]["volumes"]]
        need(cm in vols, f"{name}-deployment.yaml: does not mount ConfigMap {cm}")
        svc = one(f"{k8s}/{name}-service.yaml", "Service")
        need(svc["spec"]["selector"].items() <= labels.items(),
             f"{name}-service.yaml: selector does not match the pods")
        need(all(p["targetPort"] in ports for p in svc["spec"]["ports"]),
             f"{name}-service.yaml: targetPort is not a container port name")
    pdbs = [d for d in docs(f"{k8s}/pdb.yaml")]
    for name, (labels, _) in pods.items():
        need(any(p["spec"]["selector"]["matchLabels"].items() <= labels.items() for p in pdbs),
             f"pdb.yaml: no PodDisruptionBudget selects the {name} pods")
    pool = one(f"{k8s}/inferencepool.yaml", "InferencePool")
    model = one(f"{k8s}/inferencepool.yaml", "InferenceModel")
    for d in (pool, model):
        need(d["apiVersion"] == "inference.networking.x-k8s.io/v1alpha2",
             f"inferencepool.yaml: {d['kind']} apiVersion")
    labels, tpl = pods["serve"]
    need(pool["spec"]["selector"].items() <= labels.items(),
         "inferencepool.yaml: selector does not match the serve pods")
    need(pool["spec"]["targetPortNumber"] in
         [p["containerPort"] for p in tpl["spec"]["containers"][0]["ports"]],
         "inferencepool.yaml: targetPortNumber is not serve's container port")
    need(bool(pool["spec"]["extensionRef"]["name"]), "inferencepool.yaml: extensionRef.name")
    need(model["spec"]["poolRef"]["name"] == pool["metadata"]["name"],
         "inferencepool.yaml: InferenceModel poolRef is not the InferencePool")
    need(bool(model["spec"]["modelName"]), "inferencepool.yaml: InferenceModel modelName")
    return errors

def cmd_mounts(k8s):
    """--config of each Deployment is the ConfigMap's file where the container mounts it."""
    errors = []
    for name in ("serve", "gateway"):
        cm = one(f"{k8s}/{name}-configmap.yaml", "ConfigMap")
        spec = one(f"{k8s}/{name}-deployment.yaml", "Deployment")["spec"]["template"]["spec"]
        c = spec["containers"][0]
        files = {}  # path in the container -> ConfigMap key
        for v in spec.get("volumes", []):
            cmv = v.get("configMap")
            if not cmv or cmv.get("name") != cm["metadata"]["name"]:
                continue
            items = ({i["path"]: i["key"] for i in cmv["items"]} if cmv.get("items")
                     else {k: k for k in cm["data"]})
            for m in c.get("volumeMounts", []):
                if m["name"] != v["name"]:
                    continue
                if m.get("subPath"):
                    if m["subPath"] in items:
                        files[m["mountPath"]] = items[m["subPath"]]
                else:
                    for p, k in items.items():
                        files[posixpath.join(m["mountPath"], p)] = k
        config = arg(c["args"], "--config")
        want = f"{name}.yaml"
        if files.get(config) != want:
            errors.append(f"k8s/{name}-deployment.yaml: --config {config} is not key {want} of "
                          f"k8s/{name}-configmap.yaml where the volume is mounted (volumeMounts "
                          f"mountPath): {', '.join(p for p, k in files.items() if k == want) or 'not mounted'}")
    return errors

def serve_hosts(svc):
    n = svc["metadata"]["name"]
    ns = svc["metadata"].get("namespace", r"[a-z0-9-]+")
    return rf"{re.escape(n)}(?:\.{ns}(?:\.svc(?:\.cluster\.local)?)?)?"

def pool_endpoints(gateway_yaml):
    for pool in yaml.safe_load(gateway_yaml).get("pools") or []:
        for e in pool.get("endpoints") or []:
            yield pool, str(e).split("=", 1)[-1]

def cmd_pool_urls(k8s):
    """gateway-configmap.yaml's endpoints naming the serve Service use one of its ports."""
    errors = []
    svc = one(f"{k8s}/serve-service.yaml", "Service")
    ports = [p["port"] for p in svc["spec"]["ports"]]
    data = one(f"{k8s}/gateway-configmap.yaml", "ConfigMap")["data"]["gateway.yaml"]
    for pool, u in pool_endpoints(data):
        s = urlsplit(u)
        if not re.fullmatch(serve_hosts(svc), s.hostname or ""):
            continue
        port = s.port or (443 if s.scheme == "https" else 80)
        if port not in ports:
            errors.append(f"k8s/gateway-configmap.yaml: pool {pool.get('model')} endpoint {u}: port "
                          f"{port} is not a port of k8s/serve-service.yaml ({ports})")
    return errors

def cmd_local_gateway(k8s, src, dst, addr):
    """gateway.yaml with the URLs of the serve Service pointed at addr (a local serve)."""
    svc = one(f"{k8s}/serve-service.yaml", "Service")
    text = open(src).read()
    text = re.sub(rf"https?://{serve_hosts(svc)}(?::\d+)?(?=[/\"'\s,\]]|$)", f"http://{addr}", text)
    open(dst, "w").write(text)

def listen(path, default):
    """(host, port, what) the unit's ExecStart listens on, its Environment= expanded."""
    env = unit_env(path)
    raw = unit(path)["ExecStart"].split()
    words = expand(unit(path)["ExecStart"], env).split()
    host, port = default.rsplit(":", 1)
    host, port = arg(words, "--host", host), arg(words, "--port", port)
    what = " ".join(f"{f} {arg(raw, f)}" + (f"={arg(words, f)}" if arg(raw, f) != arg(words, f) else "")
                    for f in ("--host", "--port") if f in raw) or "the defaults"
    return host, int(port), what

def cmd_units(units, prom, *defaults):
    """The units' ExecStart address, their Exec* URLs and prometheus.yml's targets agree."""
    errors = []
    defaults = dict(d.split("=", 1) for d in defaults)
    jobs = {j["job_name"]: j for j in yaml.safe_load(open(f"{prom}/prometheus.yml"))["scrape_configs"]}
    for name in ("serve", "gateway"):
        u = f"spillway-{name}.service"
        host, port, what = listen(f"{units}/{u}", defaults[name])
        env = unit_env(f"{units}/{u}")
        for k, v in unit_items(f"{units}/{u}"):
            if not k.startswith("Exec") or k == "ExecStart":
                continue
            for url in urls(expand(v, env)):
                s = urlsplit(url)
                p = s.port or (443 if s.scheme == "https" else 80)
                if p != port or not host_ok(s.hostname, host):
                    errors.append(f"systemd/{u}: {k} URL {url} is not ExecStart's {host}:{port} ({what})")
        job = jobs.get(f"spillway-{name}")
        if not job:
            errors.append(f"prometheus/prometheus.yml: no job spillway-{name} (systemd/{u})")
            continue
        targets = [t for sc in job.get("static_configs", []) for t in sc.get("targets", [])]
        if not targets:
            errors.append(f"prometheus/prometheus.yml: job spillway-{name} has no static target")
        for t in targets:
            th, tp = t.rsplit(":", 1) if ":" in t else (t, "80")
            if int(tp) != port or not host_ok(th, host):
                errors.append(f"prometheus/prometheus.yml: job spillway-{name} target {t} is not "
                              f"systemd/{u}'s {host}:{port} ({what})")
    return errors

def cmd_paths(k8s, units, prom):
    """Lines TARGET<tab>PATH<tab>WHERE: the paths the files GET on serve and the gateway."""
    seen = {}
    def add(target, path, where):
        seen.setdefault((target, path), []).append(where)
    for name in ("serve", "gateway"):
        tpl = one(f"{k8s}/{name}-deployment.yaml", "Deployment")["spec"]["template"]
        for hname, h in handlers(tpl["spec"]["containers"][0]):
            for path, _, _ in handler_gets(h):
                add(name, path, f"k8s/{name}-deployment.yaml {hname}")
        ann = tpl["metadata"].get("annotations") or {}
        if ann.get("prometheus.io/scrape") == "true":
            add(name, ann.get("prometheus.io/path", "/metrics"), f"k8s/{name}-deployment.yaml prometheus.io/path")
        u = f"spillway-{name}.service"
        env = unit_env(f"{units}/{u}")
        for k, v in unit_items(f"{units}/{u}"):
            if k.startswith("Exec") and k != "ExecStart":
                for url in urls(expand(v, env)):
                    add(name, url_path(url), f"systemd/{u} {k}")
        for j in yaml.safe_load(open(f"{prom}/prometheus.yml"))["scrape_configs"]:
            if j["job_name"] == f"spillway-{name}":
                add(name, j.get("metrics_path", "/metrics"), f"prometheus/prometheus.yml job {j['job_name']}")
    for (target, path), where in seen.items():
        print(f"{target}\t{path}\t{', '.join(where)}")

def cmd_models(k8s, served_json):
    """The InferenceModel's and the serve-bound gateway pools' model are what serve serves."""
    errors = []
    served = [m["id"] for m in json.loads(served_json)["data"]]
    model = one(f"{k8s}/inferencepool.yaml", "InferenceModel")
    names = [t["name"] for t in model["spec"].get("targetModels") or []] or [model["spec"].get("modelName")]
    for n in names:
        if n not in served:
            errors.append(f"k8s/inferencepool.yaml: InferenceModel model {n} is not what serve serves "
                          f"(k8s/serve-deployment.yaml --model, default spillway-emulated): {served}")
    svc = one(f"{k8s}/serve-service.yaml", "Service")
    data = one(f"{k8s}/gateway-configmap.yaml", "ConfigMap")["data"]["gateway.yaml"]
    for pool, u in pool_endpoints(data):
        if re.fullmatch(serve_hosts(svc), urlsplit(u).hostname or ""):
            if pool.get("model") not in served:
                errors.append(f"k8s/gateway-configmap.yaml: pool model {pool.get('model')} (endpoint {u}) is "
                              f"not what serve serves (k8s/serve-deployment.yaml --model, default "
                              f"spillway-emulated): {served}")
    return errors

cmd, *rest = sys.argv[1:]
if cmd in ("timeouts", "refs", "mounts", "pool_urls", "units", "models"):
    errs = globals()["cmd_" + cmd](*rest)
    print("\n".join(errs), file=sys.stderr)
    sys.exit(1 if errs else 0)
globals()["cmd_" + cmd](*rest)
PY
py() { "$PYTHON" "$tmp/deploy.py" "$@"; }

# Waits up to $2 s for "listening on http://HOST:PORT" in log $1; prints HOST:PORT.
listening() {
  local i addr
  for ((i = 0; i < $2 * 10; i++)); do
    addr=$(sed -n 's|.*listening on http://\([0-9.]*:[0-9]*\).*|\1|p' "$1" | head -1)
    [[ -n $addr ]] && { echo "$addr"; return 0; }
    sleep 0.1
  done
  return 1
}
# stops NAME PID SECONDS: SIGTERM to PID (a child of this shell); passes when it exits 0 in time.
stops() {
  local i rc
  kill -TERM "$2" 2>/dev/null
  for ((i = 0; i < $3 * 10; i++)); do
    if ! kill -0 "$2" 2>/dev/null; then
      wait "$2"
      rc=$?
      if ((rc == 0)); then ok "$1"; else fail "$1" "exit status $rc"; fi
      return
    fi
    sleep 0.1
  done
  fail "$1" "still running after $3 s"
}

echo "check-deploy: $DEPLOY/ with $BIN"

# --- lint
check "yamllint $DEPLOY/ ($YAMLLINT_CONFIG)" yamllint -s -c "$YAMLLINT_CONFIG" "$DEPLOY/"
echo "note  no Kubernetes schema check: no validator (kubeconform, kubeval) is packaged in Debian bookworm"

# --- Prometheus
"$BIN" policy alerts "$POLICY" --out "$tmp/rules.yaml" >/dev/null
check "$PROM/spillway-rules.yaml is what 'spillway policy alerts $POLICY' writes" \
  diff -u "$PROM/spillway-rules.yaml" "$tmp/rules.yaml"
check "promtool check rules $PROM/spillway-rules.yaml" promtool check rules "$PROM/spillway-rules.yaml"
check "promtool check config $PROM/prometheus.yml" promtool check config "$PROM/prometheus.yml"
if out=$(promtool check config "$PROM/prometheus-k8s.yml" 2>&1); then
  ok "promtool check config $PROM/prometheus-k8s.yml"
elif grep -q 'field kubernetes_sd_configs not found' <<<"$out"; then
  echo "skip  promtool check config $PROM/prometheus-k8s.yml: this promtool is built without" \
    "Kubernetes discovery (Debian's is); yamllint only"
else
  fail "promtool check config $PROM/prometheus-k8s.yml" "$out"
fi

# --- systemd
mkdir "$tmp/units"
for u in spillway-serve spillway-gateway; do
  sed "s#/usr/local/bin/spillway #$BIN #" "$UNITS/$u.service" >"$tmp/units/$u.service"
done
verify() {
  local out
  out=$(systemd-analyze verify "$tmp/units/spillway-serve.service" "$tmp/units/spillway-gateway.service" 2>&1)
  local rc=$?
  echo "$out"
  [[ $rc -eq 0 && -z $out ]]
}
check "systemd-analyze verify $UNITS/*.service (ExecStart at $BIN)" verify
unit_flags() {
  local f bad=0 help
  help=$("$BIN" "$2" --help)
  for f in $(py unit_flags "$UNITS/$1"); do
    grep -Eq -- "^ *$f( |$)" <<<"$help" || { echo "$f is not in 'spillway $2 --help'"; bad=1; }
  done
  return $bad
}
check "spillway-serve.service: its flags are spillway serve's" unit_flags spillway-serve.service serve
check "spillway-gateway.service: its flags are spillway gateway's" unit_flags spillway-gateway.service gateway

# --- Kubernetes files against what the policy renders
"$BIN" policy render "$POLICY" --out "$tmp/render" >/dev/null
py data "$K8S/serve-configmap.yaml" serve.yaml >"$tmp/serve.yaml"
py data "$K8S/gateway-configmap.yaml" gateway.yaml >"$tmp/gateway.yaml"
check "$K8S/serve-configmap.yaml: serve.yaml is what 'spillway policy render $POLICY' writes" \
  diff -u "$tmp/render/serve.yaml" "$tmp/serve.yaml"
gateway_prefix() {
  head -c "$(wc -c <"$tmp/render/gateway.yaml")" "$tmp/gateway.yaml" | diff -u "$tmp/render/gateway.yaml" -
}
check "$K8S/gateway-configmap.yaml: gateway.yaml starts with what 'spillway policy render' writes" gateway_prefix
check "$K8S: selectors, ports, ConfigMaps, PDBs and the InferencePool refer to each other" py refs "$K8S"
check "grace periods and TimeoutStopSec above preStop + drain budget" py timeouts "$K8S" "$UNITS"
check "$K8S/*-deployment.yaml: --config is the file the ConfigMap volume's mountPath puts there" py mounts "$K8S"
check "$K8S/gateway-configmap.yaml: pool URLs to the serve Service use serve-service.yaml's port" \
  py pool_urls "$K8S"
# The binary's defaults for a unit without --host/--port.
listen_default() {
  local help
  help=$("$BIN" "$1" --help)
  echo "$1=$(sed -n 's/^ *--host [^=]*=\([^ ]*\).*/\1/p' <<<"$help"):$(sed -n 's/^ *--port [^=]*=\([0-9]*\).*/\1/p' <<<"$help")"
}
check "$UNITS/*.service: ExecStart's --host/--port = their ExecStartPost URLs = $PROM/prometheus.yml's targets" \
  py units "$UNITS" "$PROM" "$(listen_default serve)" "$(listen_default gateway)"

# --- serve and gateway start on the ConfigMaps, with the Deployments' arguments
# Loopback and a free port instead of --host/--port; the ConfigMap's file instead of --config
# (whether that is where the volume puts it is checked above).
# SPILLWAY_PROFILE_DIR (the image's path) is not set: the binary finds profiles/ beside its build.
args_for() {
  py args "$K8S/$1-deployment.yaml" | awk -v port="$2" -v config="$3" '
    prev == "--port" { $0 = port } prev == "--host" { $0 = "127.0.0.1" } prev == "--config" { $0 = config }
    { print; prev = $0 }'
}
mapfile -t serve_args < <(args_for serve "${CHECK_DEPLOY_SERVE_PORT:-0}" "$tmp/serve.yaml")
"$BIN" "${serve_args[@]}" >"$tmp/serve.log" 2>&1 &
serve_pid=$!
pids+=("$serve_pid")
serve_up() {
  local addr
  addr=$(listening "$tmp/serve.log" 10) || { cat "$tmp/serve.log"; return 1; }
  echo "$addr" >"$tmp/serve.addr"
  curl -fsS --max-time 2 "http://$addr/health" && curl -fsS --max-time 2 "http://$addr/ready"
}
check "spillway serve starts with serve-deployment.yaml's args and the ConfigMap's serve.yaml; /health, /ready 200" serve_up
serve_addr=$(cat "$tmp/serve.addr" 2>/dev/null || echo 127.0.0.1:1)

# The pools' URLs of the serve Service (whatever port they give: checked above) to that serve.
py local_gateway "$K8S" "$tmp/gateway.yaml" "$tmp/gateway-local.yaml" "$serve_addr"
mapfile -t gateway_args < <(args_for gateway "${CHECK_DEPLOY_GATEWAY_PORT:-0}" "$tmp/gateway-local.yaml")
"$BIN" "${gateway_args[@]}" >"$tmp/gateway.log" 2>&1 &
gateway_pid=$!
pids+=("$gateway_pid")
gateway_up() {
  local addr
  addr=$(listening "$tmp/gateway.log" 10) || { cat "$tmp/gateway.log"; return 1; }
  echo "$addr" >"$tmp/gateway.addr"
  # Ready once its probe found the engine healthy: up to 10 s (a bound, not a measurement).
  curl -fsS --max-time 2 --retry 10 --retry-delay 1 --retry-all-errors "http://$addr/ready" &&
    curl -fsS --max-time 5 "http://$addr/v1/completions" -d '{"prompt": "hello", "max_tokens": 4}' |
    grep -q '"finish_reason"'
}
check "spillway gateway starts with gateway-deployment.yaml's args and the ConfigMap's gateway.yaml; ready, relays" \
  gateway_up
gateway_addr=$(cat "$tmp/gateway.addr" 2>/dev/null || echo 127.0.0.1:1)

# --- the paths the probes, hooks, units' readiness checks and scrapes GET, on the right process
# get_path TARGET ADDR PATH: 200 (or, the gateway's /ready only, 503: no engine takes work).
get_path() {
  local code
  code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 2 "http://$2$3") || { echo "GET $3: $code"; return 1; }
  echo "GET $3 on $1 (http://$2): $code"
  [[ $code == 200 || ($1 == gateway && $3 == /ready && $code == 503) ]]
}
if paths=$(py paths "$K8S" "$UNITS" "$PROM" 2>&1); then
  while IFS=$'\t' read -r target path where; do
    addr=$serve_addr
    [[ $target == gateway ]] && addr=$gateway_addr
    want=200
    [[ $target == gateway && $path == /ready ]] && want="200 (or 503: no engine takes work)"
    check "GET $path answers $want on spillway $target: $where" get_path "$target" "$addr" "$path"
  done <<<"$paths"
else
  fail "the probe, hook, ExecStartPost and scrape paths of $K8S, $UNITS, $PROM" "$paths"
fi

# --- the model names against what that serve serves
served_models() {
  local models
  models=$(curl -fsS --max-time 2 "http://$serve_addr/v1/models") || return 1
  py models "$K8S" "$models"
}
check "$K8S/inferencepool.yaml modelName, gateway-configmap.yaml pool model = serve's model (--model, GET /v1/models)" \
  served_models

# Nothing in flight: the drain ends at once. 45 s: the units' TimeoutStopSec.
stops "spillway gateway exits 0 on SIGTERM" "$gateway_pid" 45
stops "spillway serve exits 0 on SIGTERM" "$serve_pid" 45

echo "check-deploy: $passed passed, $failed failed"
((failed == 0))
