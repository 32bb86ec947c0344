#!/usr/bin/env bash
# Checks the deployment files under deploy/ (deploy/README.md):
#   - yamllint over deploy/ (config deploy/.yamllint);
#   - no drift: deploy/prometheus/spillway-rules.yaml is what `spillway policy alerts` writes
#     now, the ConfigMaps' serve.yaml (whole) and gateway.yaml (its start) what `spillway policy
#     render` writes now, from policies/reference.yaml;
#   - promtool check rules / check config;
#   - systemd-analyze verify on both units. It fails on an ExecStart binary that does not exist,
#     so it verifies copies (in a temporary directory) whose /usr/local/bin/spillway is the
#     binary given here; nothing else is changed. Any warning it prints counts as a failure
#     (it exits 0 on an unknown key). The units' flags must be in the binary's --help;
#   - the Kubernetes objects refer to each other consistently (labels, ports, names);
#   - terminationGracePeriodSeconds > preStop sleep + drain budget, TimeoutStopSec > drain
#     budget (the budget is the --drain-timeout-s flag the manifests and units pass);
#   - spillway serve starts with the Deployment's arguments and the ConfigMap's serve.yaml, on
#     loopback and a free port (serve has no --check), and answers /health and /ready; spillway
#     gateway starts with its Deployment's arguments and ConfigMap (the engine URL pointed at
#     that serve), turns ready and relays a completion; both exit 0 on SIGTERM.
# There is no Kubernetes schema check: no validator (kubeconform, kubeval) is packaged in
# Debian bookworm, and kubectl's dry runs need a cluster.
#
# Usage: scripts/check-deploy.sh [SPILLWAY_BINARY]    (default build/spillway)
# CHECK_DEPLOY_POLICY: the policy the files were generated from (default policies/reference.yaml).
# CHECK_DEPLOY_SERVE_PORT, CHECK_DEPLOY_GATEWAY_PORT: the loopback ports of those two runs
# (default 0: any free port).
# Installs nothing. Exit: 0 every check passed; 1 a check failed; 2 a tool or the binary missing.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

BIN=${1:-build/spillway}
POLICY=${CHECK_DEPLOY_POLICY:-policies/reference.yaml}
K8S=deploy/k8s
PROM=deploy/prometheus
UNITS=deploy/systemd

missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$1 (Debian package $2)"); }
need yamllint yamllint
need systemd-analyze systemd
need promtool prometheus
need curl curl
need python3 python3
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import yaml' 2>/dev/null; then
  missing+=("python3's yaml module (Debian package python3-yaml)")
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

tmp=$(mktemp -d /tmp/check-deploy.XXXXXX)
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
import re, sys, yaml

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

def unit(path):
    keys = {}
    for line in open(path):
        m = re.match(r"^(\w+)=(.*)$", line.strip())
        if m:
            keys.setdefault(m.group(1), m.group(2))
    return keys

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
        sleep = float(c["lifecycle"]["preStop"]["exec"]["command"][-1])
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
        for probe in ("readinessProbe", "livenessProbe"):
            need(c[probe]["httpGet"]["port"] in ports, f"{name}-deployment.yaml: {probe} port")
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

cmd, *rest = sys.argv[1:]
if cmd in ("timeouts", "refs"):
    errs = globals()["cmd_" + cmd](*rest)
    print("\n".join(errs), file=sys.stderr)
    sys.exit(1 if errs else 0)
globals()["cmd_" + cmd](*rest)
PY
py() { python3 "$tmp/deploy.py" "$@"; }

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

echo "check-deploy: deploy/ with $BIN"

# --- lint
check "yamllint deploy/ (deploy/.yamllint)" yamllint -s -c deploy/.yamllint deploy/
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

# --- serve and gateway start on the ConfigMaps, with the Deployments' arguments
# Loopback and a free port instead of 0.0.0.0:PORT; the ConfigMap's file instead of the mount.
# SPILLWAY_PROFILE_DIR (the image's path) is not set: the binary finds profiles/ beside its build.
args_for() {
  py args "$K8S/$1-deployment.yaml" | sed -e "s#^/etc/spillway/$1.yaml\$#$tmp/$1.yaml#" \
    -e 's#^0\.0\.0\.0$#127.0.0.1#' | awk -v port="$2" 'prev == "--port" { $0 = port } { print; prev = $0 }'
}
mapfile -t serve_args < <(args_for serve "${CHECK_DEPLOY_SERVE_PORT:-0}")
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

sed "s#http://spillway-serve:8000#http://$serve_addr#" "$tmp/gateway.yaml" >"$tmp/gateway-local.yaml"
mapfile -t gateway_args < <(args_for gateway "${CHECK_DEPLOY_GATEWAY_PORT:-0}" |
  sed "s#^$tmp/gateway.yaml\$#$tmp/gateway-local.yaml#")
"$BIN" "${gateway_args[@]}" >"$tmp/gateway.log" 2>&1 &
gateway_pid=$!
pids+=("$gateway_pid")
gateway_up() {
  local addr
  addr=$(listening "$tmp/gateway.log" 10) || { cat "$tmp/gateway.log"; return 1; }
  # Ready once its probe found the engine healthy: up to 10 s (a bound, not a measurement).
  curl -fsS --max-time 2 --retry 10 --retry-delay 1 --retry-all-errors "http://$addr/ready" &&
    curl -fsS --max-time 5 "http://$addr/v1/completions" -d '{"prompt": "hello", "max_tokens": 4}' |
    grep -q '"finish_reason"'
}
check "spillway gateway starts with gateway-deployment.yaml's args and the ConfigMap's gateway.yaml; ready, relays" \
  gateway_up

# Nothing in flight: the drain ends at once. 45 s: the units' TimeoutStopSec.
stops "spillway gateway exits 0 on SIGTERM" "$gateway_pid" 45
stops "spillway serve exits 0 on SIGTERM" "$serve_pid" 45

echo "check-deploy: $passed passed, $failed failed"
((failed == 0))
