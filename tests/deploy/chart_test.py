"""The Helm chart (deploy/helm/compile-lens), checked with real Helm and the Kubernetes schemas.

- `helm lint --strict`, with the default values and with every optional feature on; NOTES.txt
  rendered by an install dry run.
- `helm template` with the default values and with every optional feature on (TLS, mTLS, token,
  --api-versions monitoring.coreos.com/v1 and custom.metrics.k8s.io/v1beta1 so that the
  ServiceMonitor, the PrometheusRule and the HPA's in-flight metric render), each rendering
  validated against the Kubernetes 1.27 schemas and prometheus-operator's (validator/validate.js),
  then policy assertions: native gRPC probes on the numeric gRPC port (liveness on "liveness"),
  non-root numeric user, read-only root, no privilege escalation, no capabilities, CPU and memory
  requests and limits, named ports, the drain fitting in terminationGracePeriodSeconds, Services,
  HPA and PDB selecting the Deployment's pods, every flag passed existing in cl-server.
- values.schema.json refuses bad values, and the templates' own guards fail the render.
- The monitoring objects carry deploy/monitoring's rules and dashboard unchanged, and
  `helm package` makes a self-contained chart of the files/ links.

Environment: HELM (the binary), NODE, CL_K8S_VALIDATOR_DIR (kubernetes-models, from
scripts/setup.sh), CL_SOURCE_DIR (the checkout).
"""
import json
import os
import re
import subprocess
import tarfile
import tempfile
import unittest

SOURCE_DIR = os.environ["CL_SOURCE_DIR"]
HELM = os.environ["HELM"]
NODE = os.environ.get("NODE", "node")
CHART = os.path.join(SOURCE_DIR, "deploy", "helm", "compile-lens")
MONITORING = os.path.join(SOURCE_DIR, "deploy", "monitoring")
VALIDATE_JS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "validator", "validate.js")
KUBE_VERSION = "1.27.0"  # the schemas' version (kubernetes-models 4.5.1)
RELEASE = "cl"
NAMESPACE = "ml"

# Every optional feature on. The cluster is told it serves the prometheus-operator and custom
# metrics APIs (what kube-prometheus-stack and prometheus-adapter install).
ALL_FEATURES = [
    "--api-versions", "monitoring.coreos.com/v1",
    "--api-versions", "custom.metrics.k8s.io/v1beta1",
    "--set", "tls.enabled=true,tls.secretName=cl-tls,tls.clientCA.enabled=true",
    "--set", "auth.token.enabled=true,auth.token.secretName=cl-token",
    "--set", "serviceMonitor.labels.release=kube-prometheus-stack",
    "--set", "prometheusRule.labels.release=kube-prometheus-stack",
    "--set", "dashboard.annotations.grafana_folder=compile-lens",
    "--set", "podAnnotations.team=ml-infra,podLabels.tier=analysis,priorityClassName=high",
    "--set", "imagePullSecrets[0].name=registry",
    "--set", "server.extraArgs[0]=--metrics_label_values=32",
    "--set-string", "server.env.MIMALLOC_DECOMMIT_DELAY=25",
    "--set", "nodeSelector.pool=cpu",
    "--set", "server.correctnessDb.configMap=cl-correctness-db",
    "--set", "server.metricsLabelAllow.cluster={us-east,us-west}",
]
# Autoscaling off: the Deployment owns the replica count.
NO_AUTOSCALING = ["--set", "autoscaling.enabled=false,replicaCount=3"]


def run(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kwargs)
    # Helm notes (at INFO) that it follows the files/ links; that is expected.
    proc.stderr = "\n".join(line for line in proc.stderr.splitlines() if "symbolic link" not in line)
    return proc


def helm_template(*args):
    return run([HELM, "template", RELEASE, CHART, "--namespace", NAMESPACE, "--kube-version", KUBE_VERSION, *args])


def node_validate(*args):
    proc = run([NODE, VALIDATE_JS, *args], env=dict(os.environ))
    if proc.returncode not in (0, 1) or not proc.stdout:
        raise AssertionError(f"validate.js failed to run: {proc.stderr}")
    return proc.returncode, json.loads(proc.stdout)


def declared_server_flags():
    """Every ABSL_FLAG cl-server links (service/**.cc): the flags the chart may pass."""
    flags = set()
    for dirpath, _, files in os.walk(os.path.join(SOURCE_DIR, "service")):
        for name in files:
            if name.endswith(".cc"):
                with open(os.path.join(dirpath, name)) as f:
                    flags.update(re.findall(r"ABSL_FLAG\(\s*[\w:<>, ]+?,\s*(\w+)\s*,", f.read()))
    return flags


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


class Rendering:
    """One `helm template` output, validated, indexed by kind."""

    def __init__(self, test, *args):
        proc = helm_template(*args)
        test.assertEqual(proc.returncode, 0, f"helm template {' '.join(args)}:\n{proc.stderr}")
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            f.write(proc.stdout)
            f.flush()
            rc, out = node_validate(f.name)
        test.assertEqual(out["errors"], [], f"schema errors in helm template {' '.join(args)}")
        test.assertEqual(rc, 0)
        self.docs = out["documents"]
        self.args = args

    def of_kind(self, kind):
        return [d for d in self.docs if d["kind"] == kind]

    def one(self, kind):
        found = self.of_kind(kind)
        assert len(found) == 1, f"{len(found)} {kind} objects, want 1"
        return found[0]

    @property
    def workloads(self):
        """(kind, name, pod spec, pod labels) of every pod the chart makes."""
        out = []
        for d in self.docs:
            if d["kind"] == "Deployment":
                out.append((d["kind"], d["metadata"]["name"], d["spec"]["template"]["spec"],
                            d["spec"]["template"]["metadata"]["labels"]))
            elif d["kind"] == "Pod":
                out.append((d["kind"], d["metadata"]["name"], d["spec"], d["metadata"]["labels"]))
        return out


class ChartTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        version = run([HELM, "version", "--short"])
        assert version.returncode == 0, version.stderr
        print(f"helm {version.stdout.strip()}", flush=True)

    # ---- helm lint ------------------------------------------------------------------------

    def test_lint_strict(self):
        # `helm lint` has no --api-versions: it lints the values, under the default capabilities.
        all_values = [a for a, prev in zip(ALL_FEATURES, [""] + ALL_FEATURES)
                      if "--api-versions" not in (a, prev)]
        for args in ([], all_values, NO_AUTOSCALING):
            with self.subTest(args=" ".join(args) or "defaults"):
                proc = run([HELM, "lint", "--strict", CHART, "--kube-version", KUBE_VERSION, *args])
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                self.assertIn("0 chart(s) failed", proc.stdout)
                self.assertNotIn("[WARNING]", proc.stdout)
                self.assertNotIn("[ERROR]", proc.stdout)

    def test_notes(self):
        """NOTES.txt renders (an install dry run, no cluster) and tells how to reach the service."""
        all_values = [a for a, prev in zip(ALL_FEATURES, [""] + ALL_FEATURES)
                      if "--api-versions" not in (a, prev)]
        for args in ([], all_values):
            with self.subTest(args=" ".join(args) or "defaults"):
                proc = run([HELM, "install", RELEASE, CHART, "--namespace", NAMESPACE, "--dry-run=client", *args])
                self.assertEqual(proc.returncode, 0, proc.stderr)
                notes = proc.stdout.split("NOTES:", 1)[1]
                self.assertIn(f"dns:///{RELEASE}-compile-lens-headless.{NAMESPACE}.svc:50051", notes)
                self.assertIn(f"helm test {RELEASE}", notes)
                self.assertIn("monitoring.coreos.com/v1) is not served", notes)

    # ---- rendering, schemas, policy -------------------------------------------------------

    def test_default_render(self):
        r = Rendering(self)
        self.check_policy(r)
        kinds = sorted(d["kind"] for d in r.docs)
        self.assertEqual(kinds, sorted([
            "ServiceAccount", "Deployment", "Service", "Service", "HorizontalPodAutoscaler",
            "PodDisruptionBudget", "ConfigMap", "Pod"]))
        # No prometheus-operator API, no custom metrics API: neither is assumed.
        self.assertEqual(r.of_kind("ServiceMonitor") + r.of_kind("PrometheusRule"), [])
        hpa = r.one("HorizontalPodAutoscaler")
        self.assertEqual([m["type"] for m in hpa["spec"]["metrics"]], ["Resource"])
        container = r.one("Deployment")["spec"]["template"]["spec"]["containers"][0]
        self.assertIn("grpc", container["readinessProbe"])
        self.assertFalse(any(a.startswith(("--tls", "--token")) for a in container["args"]))
        self.assertNotIn("env", container)  # cl-server's own heap setting, unless server.env says

    def test_all_features_render(self):
        r = Rendering(self, *ALL_FEATURES)
        self.check_policy(r)
        deployment = r.one("Deployment")
        pod = deployment["spec"]["template"]["spec"]
        container = pod["containers"][0]
        args = container["args"]
        # The secrets, mounted read-only, and the flags that read them.
        mounts = {m["name"]: m for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        self.assertEqual(volumes["tls"]["secret"]["secretName"], "cl-tls")
        self.assertEqual(volumes["client-ca"]["secret"]["secretName"], "cl-tls")
        self.assertEqual(volumes["token"]["secret"]["secretName"], "cl-token")
        for name in ("tls", "client-ca", "token", "correctness-db"):
            self.assertTrue(mounts[name]["readOnly"], name)
        for flag, mount, file in (("--tls_cert", "tls", "tls.crt"), ("--tls_key", "tls", "tls.key"),
                                  ("--tls_client_ca", "client-ca", "ca.crt"), ("--token_file", "token", "token")):
            self.assertIn(f"{flag}={mounts[mount]['mountPath']}/{file}", args)
        self.assertIn("--metrics_label_values=32", args)
        self.assertEqual(container["env"], [{"name": "MIMALLOC_DECOMMIT_DELAY", "value": "25"}])
        self.assertIn("--metrics_label_allow=cluster=us-east|us-west", args)
        self.assertIn("--idle_timeout=10s", args)
        self.assertIn("--max_session_memory=536870912", args)
        self.assertEqual(volumes["correctness-db"]["configMap"]["name"], "cl-correctness-db")
        self.assertIn(f"--correctness_db={mounts['correctness-db']['mountPath']}/correctness.toml", args)
        # The kubelet's gRPC probe has no TLS: over TLS the probes run cl-client from the image.
        for probe in ("readinessProbe", "livenessProbe"):
            command = container[probe]["exec"]["command"]
            self.assertEqual(command[:2], ["/usr/local/bin/cl-client", "health"])
            self.assertIn("--tls_ca=/etc/compile-lens/tls/ca.crt", command)
            self.assertIn("--tls_cert=/etc/compile-lens/tls/tls.crt", command)  # mTLS
        self.assertEqual(pod["imagePullSecrets"], [{"name": "registry"}])
        self.assertEqual(pod["priorityClassName"], "high")
        self.assertEqual(deployment["spec"]["template"]["metadata"]["labels"]["tier"], "analysis")

        # In-flight sessions scale the HPA once the custom metrics API exists, on the gauge
        # cl-server really exports.
        hpa = r.one("HorizontalPodAutoscaler")
        pods_metrics = [m["pods"] for m in hpa["spec"]["metrics"] if m["type"] == "Pods"]
        self.assertEqual(len(pods_metrics), 1)
        metric = pods_metrics[0]["metric"]["name"]
        self.assertEqual(metric, "compile_lens_sessions_inflight")
        with open(os.path.join(SOURCE_DIR, "service", "metrics.cc")) as f:
            self.assertIn(f'"{metric}"', f.read(), "the HPA's metric is not one cl-server exports")

        # The operator objects: the ServiceMonitor scrapes port "metrics" of exactly one Service
        # (each pod once), with the release label kube-prometheus-stack selects by.
        monitor = r.one("ServiceMonitor")
        self.assertEqual(monitor["metadata"]["labels"]["release"], "kube-prometheus-stack")
        selected = [s for s in r.of_kind("Service")
                    if selects(monitor["spec"]["selector"]["matchLabels"], s["metadata"]["labels"])]
        with_port = [s for s in selected
                     if any(p["name"] == e["port"] for p in s["spec"]["ports"] for e in monitor["spec"]["endpoints"])]
        self.assertEqual(len(with_port), 1, "the ServiceMonitor must scrape each pod through one Service")
        self.assertEqual(monitor["spec"]["endpoints"][0]["path"], "/metrics")

        # deploy/monitoring's rules and dashboard, unchanged.
        rule = r.one("PrometheusRule")
        self.assertEqual(rule["metadata"]["labels"]["release"], "kube-prometheus-stack")
        _, rules = node_validate("--parse", os.path.join(MONITORING, "rules.yml"))
        self.assertEqual(rule["spec"]["groups"], rules["documents"][0]["groups"])
        dashboard = r.one("ConfigMap")
        self.assertEqual(dashboard["metadata"]["labels"]["grafana_dashboard"], "1")
        self.assertEqual(dashboard["metadata"]["annotations"], {"grafana_folder": "compile-lens"})
        with open(os.path.join(MONITORING, "dashboard.json")) as f:
            self.assertEqual(json.loads(dashboard["data"]["compile-lens.json"]), json.load(f))

        # helm test's pod speaks TLS too.
        test_pod = r.one("Pod")
        self.assertIn("--tls_ca=/etc/compile-lens/tls/ca.crt", test_pod["spec"]["containers"][0]["command"])

    def test_every_flag_exists_in_cl_server(self):
        """A flag cl-server does not declare makes it exit at start-up: the pod would crash-loop."""
        declared = declared_server_flags()
        for args in ([], ALL_FEATURES):
            with self.subTest(args=" ".join(args) or "defaults"):
                r = Rendering(self, *args)
                passed = {a[2:].split("=", 1)[0] for a in r.one("Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]}
                self.assertEqual(sorted(passed - declared), [],
                                 "flags the chart passes that cl-server does not declare (ABSL_FLAG in service/)")

    def test_render_without_autoscaling(self):
        r = Rendering(self, *NO_AUTOSCALING)
        self.check_policy(r)
        self.assertEqual(r.of_kind("HorizontalPodAutoscaler"), [])
        self.assertEqual(r.one("Deployment")["spec"]["replicas"], 3)

    def check_policy(self, r):
        """What every rendering must hold, whatever the values."""
        deployment = r.one("Deployment")
        name = deployment["metadata"]["name"]
        for doc in r.docs:
            labels = doc["metadata"].get("labels", {})
            for key in ("app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "helm.sh/chart"):
                self.assertIn(key, labels, f"{doc['kind']}/{doc['metadata']['name']} has no {key}")

        pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
        self.assertTrue(selects(deployment["spec"]["selector"]["matchLabels"], pod_labels))
        pod = deployment["spec"]["template"]["spec"]
        self.assertIs(pod["automountServiceAccountToken"], False)
        (container,) = pod["containers"]
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        self.assertEqual(set(ports), {"grpc", "metrics"})

        # cl-server's flags: both ports bind every address (the kubelet probes the pod IP),
        # connections age out, and the drain fits in the grace period.
        args = dict(a[2:].split("=", 1) for a in container["args"])
        self.assertEqual(args["listen"], f"0.0.0.0:{ports['grpc']}")
        self.assertEqual(args["metrics_listen"], f"0.0.0.0:{ports['metrics']}")
        seconds = {k: int(args[k].rstrip("s")) for k in ("max_connection_age", "drain_delay", "drain_grace")}
        self.assertGreater(seconds["max_connection_age"], 0)
        self.assertGreater(pod["terminationGracePeriodSeconds"], seconds["drain_delay"] + seconds["drain_grace"])
        # The analysis pool is sized to the CPU limit, not to the node's cores.
        self.assertEqual(int(args["analysis_threads"]), int(float(container["resources"]["limits"]["cpu"])))

        # Probes: native gRPC on the numeric port unless TLS forces exec (checked by the caller).
        readiness, liveness = container["readinessProbe"], container["livenessProbe"]
        if "grpc" in readiness:
            self.assertEqual(readiness["grpc"], {"port": ports["grpc"]})
            self.assertEqual(liveness["grpc"], {"port": ports["grpc"], "service": "liveness"})
        else:
            self.assertIn("exec", readiness)
            self.assertIn("exec", liveness)

        for kind, pod_name, spec, _ in r.workloads:
            for c in spec["containers"]:
                where = f"{kind}/{pod_name} container {c['name']}"
                sc = {**spec.get("securityContext", {}), **c.get("securityContext", {})}
                self.assertIs(sc.get("runAsNonRoot"), True, where)
                self.assertIsInstance(sc.get("runAsUser"), int, where)
                self.assertGreater(sc["runAsUser"], 0, where)
                self.assertIs(c["securityContext"].get("readOnlyRootFilesystem"), True, where)
                self.assertIs(c["securityContext"].get("allowPrivilegeEscalation"), False, where)
                self.assertIn("ALL", c["securityContext"].get("capabilities", {}).get("drop", []), where)
                for bound in ("requests", "limits"):
                    self.assertEqual(set(c["resources"].get(bound, {})), {"cpu", "memory"}, f"{where} {bound}")

        # Services: the ClusterIP one carries both named ports, the headless one (when made) gRPC
        # only; both select the Deployment's pods, and nothing selects helm test's pod.
        services = {s["metadata"]["name"]: s for s in r.of_kind("Service")}
        main = services[name]
        self.assertEqual(main["spec"]["type"], "ClusterIP")
        self.assertEqual({p["name"]: p["targetPort"] for p in main["spec"]["ports"]}, {"grpc": "grpc", "metrics": "metrics"})
        headless = services.get(f"{name}-headless")
        if headless is not None:
            self.assertEqual(headless["spec"]["clusterIP"], "None")
            self.assertEqual([p["name"] for p in headless["spec"]["ports"]], ["grpc"])
            self.assertEqual(headless["spec"]["ports"][0]["port"], ports["grpc"])
        for service in services.values():
            self.assertTrue(selects(service["spec"]["selector"], pod_labels), service["metadata"]["name"])
            for kind, pod_name, _, labels in r.workloads:
                if kind == "Pod":
                    self.assertFalse(selects(service["spec"]["selector"], labels), pod_name)

        # The PDB covers the Deployment's pods and leaves room for one disruption at a time.
        pdb = r.one("PodDisruptionBudget")
        self.assertTrue(selects(pdb["spec"]["selector"]["matchLabels"], pod_labels))
        hpas = r.of_kind("HorizontalPodAutoscaler")
        replicas = hpas[0]["spec"]["minReplicas"] if hpas else deployment["spec"]["replicas"]
        self.assertGreaterEqual(replicas, 2, "a single replica cannot both serve and be disrupted")
        if "maxUnavailable" in pdb["spec"]:
            self.assertGreaterEqual(pdb["spec"]["maxUnavailable"], 1)
            self.assertLess(pdb["spec"]["maxUnavailable"], replicas)
        else:
            self.assertLess(pdb["spec"]["minAvailable"], replicas)
        if hpas:
            hpa = hpas[0]
            self.assertEqual(hpa["spec"]["scaleTargetRef"], {"apiVersion": "apps/v1", "kind": "Deployment", "name": name})
            self.assertNotIn("replicas", deployment["spec"], "the HPA owns the replica count")
            self.assertIn("cpu", [m["resource"]["name"] for m in hpa["spec"]["metrics"] if m["type"] == "Resource"])

    # ---- values.schema.json and the templates' guards ---------------------------------------

    def test_schema_rejects_bad_values(self):
        cases = {
            "replicaCount=-1": "/replicaCount",
            "replicas=3": "additional properties 'replicas' not allowed",
            "server.maxInflights=4": "additional properties 'maxInflights' not allowed",
            "server.grpcPort=70000": "/server/grpcPort",
            "server.maxSessionBytes=0": "/server/maxSessionBytes",
            "server.maxSessionMemory=0": "/server/maxSessionMemory",
            "server.idleTimeoutSeconds=0": "/server/idleTimeoutSeconds",
            "server.metricsLabelAllow.cluster={a|b}": "/server/metricsLabelAllow/cluster/0",
            "autoscaling.targetCPUUtilizationPercentage=0": "/autoscaling/targetCPUUtilizationPercentage",
            "image.pullPolicy=Sometimes": "/image/pullPolicy",
            "tls.enabled=true": "/tls/secretName",
            "auth.token.enabled=true": "/auth/token/secretName",
            "podDisruptionBudget.maxUnavailable=-1": "/podDisruptionBudget/maxUnavailable",
            "server.metricsLabels[0]=bad-label": "/server/metricsLabels/0",
            "server.env.MIMALLOC_DECOMMIT_DELAY=5": "/server/env/MIMALLOC_DECOMMIT_DELAY",
            "resources.limits.memory=lots": "/resources/limits/memory",
        }
        for value, message in cases.items():
            with self.subTest(value=value):
                proc = helm_template("--set", value)
                self.assertNotEqual(proc.returncode, 0, f"--set {value} was accepted")
                self.assertIn("values don't meet the specifications of the schema", proc.stderr)
                self.assertIn(message, proc.stderr)
        # And the schema lets a parent chart pass `global`.
        self.assertEqual(helm_template("--set", "global.imageRegistry=r.example").returncode, 0)

    def test_template_guards(self):
        cases = {
            ("terminationGracePeriodSeconds=60",): "must be longer than server.drainDelaySeconds + server.drainGraceSeconds (125)",
            ("podDisruptionBudget.minAvailable=1",): "set exactly one of maxUnavailable and minAvailable",
            ("tls.clientCA.enabled=true",): "tls.clientCA.enabled (mTLS) needs tls.enabled",
        }
        for values, message in cases.items():
            with self.subTest(values=values):
                proc = helm_template(*[a for v in values for a in ("--set", v)])
                self.assertNotEqual(proc.returncode, 0)
                self.assertIn(message, proc.stderr)
        proc = helm_template("--set", "terminationGracePeriodSeconds=200", "-s", "templates/deployment.yaml")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("terminationGracePeriodSeconds: 200", proc.stdout)

    # ---- the files/ links -------------------------------------------------------------------

    def test_package_is_self_contained(self):
        """files/ links to deploy/monitoring; `helm package` stores the files themselves."""
        for name in ("dashboard.json", "rules.yml"):
            link = os.path.join(CHART, "files", name)
            self.assertTrue(os.path.islink(link), f"{link} should link to deploy/monitoring/{name}")
            self.assertEqual(os.path.realpath(link), os.path.realpath(os.path.join(MONITORING, name)))
        with tempfile.TemporaryDirectory() as tmp:
            proc = run([HELM, "package", CHART, "--destination", tmp])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            (package,) = [f for f in os.listdir(tmp) if f.endswith(".tgz")]
            with tarfile.open(os.path.join(tmp, package)) as tar:
                for name in ("dashboard.json", "rules.yml"):
                    member = tar.getmember(f"compile-lens/files/{name}")
                    self.assertTrue(member.isfile(), f"{name} is not a regular file in the package")
                    with open(os.path.join(MONITORING, name), "rb") as f:
                        self.assertEqual(tar.extractfile(member).read(), f.read())
            # The packaged chart renders on its own, away from the repository.
            proc = run([HELM, "template", RELEASE, os.path.join(tmp, package), "--kube-version", KUBE_VERSION,
                        "--api-versions", "monitoring.coreos.com/v1"])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("kind: PrometheusRule", proc.stdout)


if __name__ == "__main__":
    unittest.main()
