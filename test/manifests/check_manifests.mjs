// Offline checks of manifests/: every object against the Kubernetes schemas (kubernetes-models),
// and the cross-references a schema cannot see: names, labels, selectors, config keys and files,
// the flags the binaries really take, the resources the device plugin really advertises, the
// CNI configs railyard-cni really accepts, what the image really contains.
// Usage: node check_manifests.mjs REPO BIN_DIR FIXTURE_ROOT WORK_DIR
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";

const [repo, bin, fixture, work] = process.argv.slice(2);
const manifests = path.join(repo, "manifests");
let passed = 0, failed = 0, skipped = 0;
class Skip extends Error {}
function check(name, fn) {
  try {
    fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (e) {
    if (e instanceof Skip) {
      skipped++;
      console.log(`skip ${name}: ${e.message}`);
      return;
    }
    failed++;
    console.log(`FAIL ${name}: ${e.message}`);
  }
}
function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

// --- what kubectl kustomize renders: the objects a user applies, validated below -----------
// Each kustomization's own resource files are read too, only to name the file an object came
// from in messages.
const clusterScoped = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "DeviceClass"]);
function sources(dir) {
  const k = YAML.parse(fs.readFileSync(path.join(dir, "kustomization.yaml"), "utf8"));
  const files = {};
  for (const file of k.resources) {
    for (const doc of YAML.parseAllDocuments(fs.readFileSync(path.join(dir, file), "utf8"))) {
      assert(doc.errors.length === 0, `${file}: ${doc.errors.map((e) => e.message).join("; ")}`);
      const o = doc.toJS();
      if (o) files[`${o.kind}/${o.metadata.name}`] = path.relative(repo, path.join(dir, file));
    }
  }
  return { k, files };
}
function kustomize(dir) {
  const r = spawnSync("kubectl", ["kustomize", dir], { encoding: "utf8" });
  if (r.error) throw new Error(`kubectl kustomize ${dir}: ${r.error.message} (install-deps installs kubernetes-client)`);
  assert(r.status === 0, `kubectl kustomize ${dir}: ${r.stderr.trim()}`);
  return YAML.parseAllDocuments(r.stdout).map((d) => d.toJS()).filter(Boolean);
}
const dirs = ["", "validate", "validate-mpi", "validate-fleet", "dra"].map((d) => path.join(manifests, d));
const rendered = {};
for (const d of dirs) {
  const rel = path.relative(repo, d);
  check(`${rel}: kustomization lists every manifest, and only existing ones`, () => {
    const { k } = sources(d);
    for (const f of k.resources) assert(fs.existsSync(path.join(d, f)), `${f} does not exist`);
    const yamls = fs.readdirSync(d).filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml");
    for (const f of yamls) assert(k.resources.includes(f), `${f} is not in kustomization.yaml`);
  });
  rendered[d] = [];
  check(`${rel}: kubectl kustomize renders it, every object in the namespace and labelled`, () => {
    const { k, files } = sources(d);
    const objects = kustomize(d);
    assert(objects.length === Object.keys(files).length,
           `rendered ${objects.length} objects from ${Object.keys(files).length}`);
    for (const o of objects) {
      const key = `${o.kind}/${o.metadata.name}`;
      assert(files[key], `${key} is rendered but in no resource file`);
      if (k.namespace && !clusterScoped.has(o.kind))
        assert(o.metadata.namespace === k.namespace, `${key} is not in ${k.namespace}`);
      assert(o.metadata.labels?.["app.kubernetes.io/part-of"] === "railyard", `${key} lacks the part-of label`);
      o.__file = files[key];
    }
    rendered[d] = objects;
  });
}
const all = Object.values(rendered).flat();
const base = rendered[dirs[0]];
const find = (kind, name) => all.find((o) => o.kind === kind && o.metadata.name === name);

// --- schemas -------------------------------------------------------------------------------
const models = {
  "v1/Namespace": "v1/Namespace", "v1/ServiceAccount": "v1/ServiceAccount", "v1/ConfigMap": "v1/ConfigMap",
  "v1/Service": "v1/Service", "apps/v1/DaemonSet": "apps/v1/DaemonSet", "batch/v1/Job": "batch/v1/Job",
  "rbac.authorization.k8s.io/v1/ClusterRole": "rbac.authorization.k8s.io/v1/ClusterRole",
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": "rbac.authorization.k8s.io/v1/ClusterRoleBinding",
  "rbac.authorization.k8s.io/v1/Role": "rbac.authorization.k8s.io/v1/Role",
  "rbac.authorization.k8s.io/v1/RoleBinding": "rbac.authorization.k8s.io/v1/RoleBinding",
};
async function model(p) {
  const mod = await import(`kubernetes-models/${p}`);
  return mod[p.split("/").pop()];
}
const PodTemplate = await model("v1/PodTemplate");
const dns1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
for (const o of all) {
  const key = `${o.apiVersion}/${o.kind}`;
  const { __file, ...obj } = o;
  const label = `${__file}: ${o.kind}/${o.metadata?.name}`;
  if (models[key]) {
    const Model = await model(models[key]);
    check(`${label} is valid against the Kubernetes schema`, () => new Model(obj).validate());
  } else if (key === "k8s.cni.cncf.io/v1/NetworkAttachmentDefinition") {
    check(`${label} is a valid NetworkAttachmentDefinition`, () => {
      assert(dns1123.test(o.metadata.name) && o.metadata.name.length <= 63, "name is not a DNS-1123 label");
      const conf = JSON.parse(o.spec.config);
      assert(conf.cniVersion && conf.name === o.metadata.name, "config needs cniVersion and name = metadata.name");
    });
  } else if (key === "resource.k8s.io/v1/DeviceClass") {
    // No model for resource.k8s.io here; the cluster test's API server validates it fully.
    check(`${label} is a DeviceClass of railyard.io devices`, () => {
      assert(/^[a-z0-9.-]+$/.test(o.metadata.name) && o.metadata.name.endsWith(".railyard.io"), "name");
      const cel = o.spec.selectors.map((x) => x.cel.expression);
      assert(cel.length && cel.every((e) => e.includes('device.driver == "railyard.io"')), `selectors: ${cel}`);
    });
  } else if (key === "kubeflow.org/v2beta1/MPIJob") {
    check(`${label} has valid Launcher and Worker pod templates`, () => {
      for (const role of ["Launcher", "Worker"]) {
        const spec = o.spec.mpiReplicaSpecs[role];
        assert(spec && Number.isInteger(spec.replicas), `${role} needs replicas`);
        new PodTemplate({ metadata: { name: `${o.metadata.name}-${role.toLowerCase()}` }, template: spec.template }).validate();
      }
    });
  } else {
    check(`${label} has a known kind`, () => assert(false, `no schema for ${key}`));
  }
}

// --- cross-references ------------------------------------------------------------------------
const podSpecs = [];  // [label, podSpec, metadata labels]
for (const o of all) {
  if (o.kind === "DaemonSet" || o.kind === "Job") podSpecs.push([`${o.kind}/${o.metadata.name}`, o.spec.template.spec, o.spec.template.metadata?.labels ?? {}]);
  if (o.kind === "MPIJob")
    for (const [role, s] of Object.entries(o.spec.mpiReplicaSpecs))
      podSpecs.push([`MPIJob/${o.metadata.name}/${role}`, s.template.spec, s.template.metadata?.labels ?? {}]);
}
const ns = base.find((o) => o.kind === "Namespace");
const configMap = find("ConfigMap", "railyard-config");

check("every namespaced object lives in the base's namespace", () => {
  for (const o of all) if (!clusterScoped.has(o.kind)) assert(o.metadata.namespace === ns.metadata.name, `${o.kind}/${o.metadata.name}`);
  for (const o of all.filter((x) => x.kind === "ClusterRoleBinding" || x.kind === "RoleBinding"))
    for (const s of o.subjects) assert(s.namespace === ns.metadata.name && find("ServiceAccount", s.name), `${o.metadata.name}: subject ${s.name}`);
});

check("pods name ServiceAccounts, ConfigMaps and keys that exist", () => {
  for (const [label, spec] of podSpecs) {
    assert(!spec.serviceAccountName || find("ServiceAccount", spec.serviceAccountName), `${label}: ServiceAccount ${spec.serviceAccountName}`);
    for (const v of spec.volumes ?? []) if (v.configMap) assert(find("ConfigMap", v.configMap.name), `${label}: ConfigMap ${v.configMap.name}`);
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
      const mounts = (c.volumeMounts ?? []).filter((m) => spec.volumes.find((v) => v.name === m.name)?.configMap);
      for (const word of [...(c.command ?? []), ...(c.args ?? [])].join(" ").split(/[\s=]+/)) {
        const m = mounts.find((mm) => word.startsWith(mm.mountPath + "/"));
        if (m) assert(configMap.data[word.slice(m.mountPath.length + 1)] !== undefined, `${label}: ${word} is not a key of railyard-config`);
      }
      for (const m of c.volumeMounts ?? []) assert(spec.volumes.find((v) => v.name === m.name), `${label}: volume ${m.name}`);
    }
  }
});

check("selectors match their pods' labels", () => {
  const ds = find("DaemonSet", "railyard-device-plugin");
  for (const [k, v] of Object.entries(ds.spec.selector.matchLabels)) assert(ds.spec.template.metadata.labels[k] === v, `DaemonSet selector ${k}`);
  const svc = find("Service", "railyard-validate"), job = find("Job", "railyard-validate");
  for (const [k, v] of Object.entries(svc.spec.selector)) assert(job.spec.template.metadata.labels[k] === v, `Service selector ${k}`);
  assert(job.spec.template.spec.subdomain === svc.metadata.name, "the Job's subdomain is not the headless Service");
  assert(svc.spec.clusterIP === "None", "the rendezvous Service must be headless");
});

check("the Indexed Job's world size, rendezvous and pod count agree", () => {
  const job = find("Job", "railyard-validate");
  const env = Object.fromEntries(job.spec.template.spec.containers[0].env.map((e) => [e.name, e.value]));
  assert(job.spec.completionMode === "Indexed", "not an Indexed Job");
  assert(String(job.spec.completions) === env.WORLD_SIZE && job.spec.parallelism === job.spec.completions, "completions, parallelism and WORLD_SIZE differ");
  assert(env.MASTER_ADDR === `${job.metadata.name}-0.${job.spec.template.spec.subdomain}`, `MASTER_ADDR ${env.MASTER_ADDR}`);
  assert(Number(env.MASTER_PORT) === find("Service", "railyard-validate").spec.ports[0].port, "MASTER_PORT is not the Service's port");
});

check("the fleet Job: Indexed, its headless Service selects its pods, world size and rendezvous agree", () => {
  const svc = find("Service", "railyard-validate-fleet"), job = find("Job", "railyard-validate-fleet");
  for (const [k, v] of Object.entries(svc.spec.selector)) assert(job.spec.template.metadata.labels[k] === v, `Service selector ${k}`);
  assert(svc.spec.clusterIP === "None" && job.spec.template.spec.subdomain === svc.metadata.name, "rendezvous Service");
  const env = Object.fromEntries(job.spec.template.spec.containers[0].env.map((e) => [e.name, e.value ?? e.valueFrom]));
  assert(job.spec.completionMode === "Indexed", "not an Indexed Job");
  assert(String(job.spec.completions) === env.WORLD_SIZE && job.spec.parallelism === job.spec.completions, "completions, parallelism and WORLD_SIZE differ");
  assert(env.MASTER_ADDR === `${job.metadata.name}-0.${svc.metadata.name}`, `MASTER_ADDR ${env.MASTER_ADDR}`);
  assert(Number(env.MASTER_PORT) === svc.spec.ports[0].port, "MASTER_PORT is not the Service's port");
  assert(env.NODE_NAME?.fieldRef?.fieldPath === "spec.nodeName", "NODE_NAME is not the node's name");
  const anti = job.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0];
  assert(anti.topologyKey === "kubernetes.io/hostname" && anti.labelSelector.matchLabels["app.kubernetes.io/name"] === job.spec.template.metadata.labels["app.kubernetes.io/name"], "one pod per node");
});

check("the MPIJob's -np, workers and rendezvous agree", () => {
  const mj = all.find((o) => o.kind === "MPIJob");
  const args = mj.spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].args;
  assert(Number(args[args.indexOf("-np") + 1]) === mj.spec.mpiReplicaSpecs.Worker.replicas, "-np is not Worker.replicas");
  assert(args.includes(`MASTER_ADDR=${mj.metadata.name}-worker-0.${mj.metadata.name}-worker`), "MASTER_ADDR is not worker 0");
});

// The flags each container passes are flags the binary takes (its --help lists them).
function help(binary, ...sub) {
  return execFileSync(path.join(bin, binary), [...sub, "--help"], { encoding: "utf8" });
}
function flagsOf(args) {
  return args.filter((a) => a.startsWith("--")).map((a) => a.split("=")[0]);
}
const ds = find("DaemonSet", "railyard-device-plugin");
const dpc = ds.spec.template.spec.containers[0];
check("the DaemonSet passes only flags railyard-device-plugin takes", () => {
  const h = help("railyard-device-plugin");
  for (const f of flagsOf(dpc.args)) assert(h.includes(f), `${f} is not a railyard-device-plugin flag`);
});
check("the validation pods pass only flags railyard-validate run takes", () => {
  const h = help("railyard-validate", "run");
  const job = find("Job", "railyard-validate").spec.template.spec.containers[0].args;
  const mpi = all.find((o) => o.kind === "MPIJob").spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].args;
  for (const f of flagsOf([...job, ...mpi.slice(mpi.indexOf("run") + 1)])) assert(h.includes(f), `${f} is not a railyard-validate run flag`);
});
check("the fleet pods pass only flags railyard-validate fleet takes", () => {
  const h = help("railyard-validate", "fleet");
  const args = find("Job", "railyard-validate-fleet").spec.template.spec.containers[0].args;
  assert(args[0] === "fleet", `the fleet Job runs ${args[0]}`);
  for (const f of flagsOf(args)) assert(h.includes(f), `${f} is not a railyard-validate fleet flag`);
});
check("the liveness probe and the port are the metrics address, on the node's own address", () => {
  const addr = dpc.args.find((a) => a.startsWith("--metrics-addr=")).split("=")[1];
  const port = Number(addr.split(":").pop());
  assert(addr.startsWith("[$(HOST_IP)]:"), `metrics on ${addr}, not the node's address`);
  const hostIp = dpc.env.find((e) => e.name === "HOST_IP");
  assert(hostIp?.valueFrom?.fieldRef?.fieldPath === "status.hostIP", "HOST_IP is not status.hostIP");
  assert(dpc.livenessProbe.httpGet.path === "/healthz" && dpc.livenessProbe.httpGet.port === port, "liveness probe");
  assert(dpc.ports[0].containerPort === port, "containerPort");
});

const dra = find("DaemonSet", "railyard-dra-driver");
check("the validation Jobs prove a per-run Secret's token on every connection", () => {
  const specs = [["Job/railyard-validate", find("Job", "railyard-validate").spec.template.spec],
    ["Job/railyard-validate-fleet", find("Job", "railyard-validate-fleet").spec.template.spec],
    ["MPIJob workers", find("MPIJob", "railyard-validate-mpi").spec.mpiReplicaSpecs.Worker.template.spec]];
  for (const [what, spec] of specs) {
    const vol = spec.volumes.find((v) => v.name === "token");
    assert(vol?.secret?.secretName === "railyard-validate-token", `${what}: no token Secret`);
    const m = spec.containers[0].volumeMounts.find((v) => v.name === "token");
    assert(m?.mountPath === "/etc/railyard-token" && m.readOnly, `${what}: token not mounted read-only`);
  }
  for (const name of ["railyard-validate", "railyard-validate-fleet"]) {
    const env = find("Job", name).spec.template.spec.containers[0].env;
    assert(env.some((e) => e.name === "RAILYARD_TOKEN_FILE" && e.value === "/etc/railyard-token/token"), `${name}: RAILYARD_TOKEN_FILE`);
  }
  const launcher = find("MPIJob", "railyard-validate-mpi").spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].args;
  assert(launcher.includes("RAILYARD_TOKEN_FILE=/etc/railyard-token/token"), "mpirun does not pass RAILYARD_TOKEN_FILE");
});
check("both DaemonSets install the CNI node policy from the ConfigMap into the node's /etc/railyard", () => {
  const policy = JSON.parse(find("ConfigMap", "railyard-config").data["cni-policy.json"]);
  assert(policy.stateDir && policy.draDir && policy.logDir && Array.isArray(policy.netdevs), JSON.stringify(policy));
  for (const d of [ds, dra]) {
    const init = d.spec.template.spec.initContainers.find((c) => c.name === "install-cni");
    assert(init.args.join(" ").includes("/host/etc/railyard/cni-policy.json"), `${d.metadata.name}: policy not installed`);
    const vol = d.spec.template.spec.volumes.find((v) => v.name === "cni-policy");
    assert(vol?.hostPath?.path === "/etc/railyard", `${d.metadata.name}: policy folder ${vol?.hostPath?.path}`);
  }
});
check("the DRA DaemonSet passes only flags railyard-dra-driver run takes, NODE_NAME from the node", () => {
  const c = dra.spec.template.spec.containers[0];
  assert(c.args[0] === "run", `runs ${c.args[0]}`);
  const h = help("railyard-dra-driver", "run");
  for (const f of flagsOf(c.args)) assert(h.includes(f), `${f} is not a railyard-dra-driver run flag`);
  // The kubelet finds the plugin where it looks, and the CNI reads the state where it is written.
  const mounts = Object.fromEntries(c.volumeMounts.map((m) => [m.mountPath, m.name]));
  const hostPath = (name) => dra.spec.template.spec.volumes.find((v) => v.name === name)?.hostPath?.path;
  for (const f of ["--registry-dir", "--plugin-dir", "--cdi-dir", "--state-dir"]) {
    const dir = c.args.find((a) => a.startsWith(f + "="))?.split("=")[1];
    assert(dir && mounts[dir] && hostPath(mounts[dir]) === dir, `${f}=${dir} is not the same host directory`);
  }
  assert(c.env.find((e) => e.name === "NODE_NAME")?.valueFrom?.fieldRef?.fieldPath === "spec.nodeName", "NODE_NAME");
});
check("one allocator per node: the device plugin avoids railyard.io/allocator=dra, the DRA driver needs it", () => {
  const expr = ds.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0];
  assert(expr.key === "railyard.io/allocator" && expr.operator === "NotIn" && expr.values.includes("dra"), JSON.stringify(expr));
  assert(dra.spec.template.spec.nodeSelector["railyard.io/allocator"] === "dra", "the DRA DaemonSet's nodeSelector");
});
check("the claim templates (dra/claims) name DeviceClasses that exist and requests they have", () => {
  const templates = kustomize(path.join(manifests, "dra", "claims"));
  assert(templates.length === 2, `${templates.length} templates`);
  for (const t of templates) {
    assert(t.apiVersion === "resource.k8s.io/v1" && t.kind === "ResourceClaimTemplate", `${t.kind}`);
    const devs = t.spec.spec.devices;
    const names = devs.requests.map((r) => r.name);
    assert(names.length <= 32 && new Set(names).size === names.length, `${t.metadata.name}: requests ${names}`);
    for (const r of devs.requests) assert(find("DeviceClass", r.exactly.deviceClassName), `${t.metadata.name}/${r.name}: ${r.exactly.deviceClassName}`);
    for (const c of devs.constraints ?? []) for (const n of c.requests) assert(names.includes(n), `${t.metadata.name}: constraint names ${n}`);
  }
});

// The ConfigMap's files are what the binaries accept.
fs.mkdirSync(work, { recursive: true });
for (const [key, value] of Object.entries(configMap.data)) fs.writeFileSync(path.join(work, key), value);
let advertised = [];
check("device-plugin.json and rails.json start railyard-device-plugin (dry run on an 8-rail node)", () => {
  const out = execFileSync(path.join(bin, "railyard-device-plugin"),
    ["--dry-run", "--config", path.join(work, "device-plugin.json"), "--rails", path.join(work, "rails.json"), "--sysfs-root", fixture],
    { encoding: "utf8" });
  advertised = [...out.matchAll(/^(\S+) \((?:bundle|vf|pf), \d+ devices/gm)].map((m) => m[1]);
  assert(advertised.includes("railyard.io/bundle") && advertised.includes("railyard.io/rail7"), `advertised: ${advertised}`);
});
check("validate.json is a valid railyard-validate config", () => {
  execFileSync(path.join(bin, "railyard-validate"), ["config", path.join(work, "validate.json")], { encoding: "utf8" });
});
check("every NAD's resourceName is a resource the device plugin advertises", () => {
  for (const o of all.filter((x) => x.kind === "NetworkAttachmentDefinition")) {
    const r = o.metadata.annotations?.["k8s.v1.cni.cncf.io/resourceName"];
    // A DRA NAD has none: its NIC comes from the pod's claims, and Multus must not look for one.
    if (JSON.parse(o.spec.config).deviceFrom === "dra") {
      assert(r === undefined, `${o.metadata.name}: deviceFrom dra with resourceName ${r}`);
      continue;
    }
    assert(advertised.includes(r), `${o.metadata.name}: ${r} is not advertised`);
  }
});
check("railyard-cni accepts every NAD's config (CNI STATUS)", () => {
  // STATUS parses the whole config and looks its IPAM plugins up in CNI_PATH. whereabouts is
  // not packaged in Debian: a stand-in of that name is what STATUS finds.
  const cniPath = path.join(work, "cni-bin");
  fs.mkdirSync(cniPath, { recursive: true });
  fs.writeFileSync(path.join(cniPath, "whereabouts"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  // The deviceID Multus would inject: a device of the NAD's resource on the fixture node.
  const topo = JSON.parse(execFileSync(path.join(bin, "railyard"),
    ["topo", "--json", "--sysfs-root", fixture, "--rails", path.join(work, "rails.json")], { encoding: "utf8" }));
  const deviceOf = (resource) => {
    const rail = resource.match(/\/rail(\d+)$/);
    const nic = topo.nics.find((n) => n.rail === (rail ? Number(rail[1]) : 0));
    return rail ? nic.vfs[0].pci : nic.pci;
  };
  for (const o of all.filter((x) => x.kind === "NetworkAttachmentDefinition")) {
    const conf = JSON.parse(o.spec.config);
    assert(conf.type === "railyard-cni" || conf.type === "railyard-sbr", `${o.metadata.name}: type ${conf.type}`);
    const deviceID = conf.deviceFrom === "dra" ? undefined : deviceOf(o.metadata.annotations["k8s.v1.cni.cncf.io/resourceName"]);
    const r = spawnSync(path.join(bin, conf.type), [], {
      input: JSON.stringify({ ...conf, cniVersion: "1.1.0", deviceID }), encoding: "utf8",
      env: { ...process.env, CNI_COMMAND: "STATUS", CNI_PATH: cniPath, RAILYARD_SYSFS_ROOT: fixture },
    });
    assert(r.status === 0, `${o.metadata.name}: ${r.stdout}${r.stderr}`);
  }
});

// The image: what the pods run is what the Dockerfile copies, and the build installs it.
check("the pods run binaries the image has, from one image", () => {
  const dockerfile = fs.readFileSync(path.join(manifests, "Dockerfile"), "utf8");
  const copied = [...dockerfile.matchAll(/\/usr\/local\/bin\/(railyard[-a-z]*)/g)].map((m) => m[1]);
  for (const b of copied) assert(fs.existsSync(path.join(bin, b)), `the Dockerfile copies ${b}, which the build does not make`);
  const images = new Set();
  for (const [label, spec] of podSpecs)
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
      images.add(c.image);
      for (const word of [...(c.command ?? []), ...(c.args ?? [])].join(" ").split(/\s+/)) {
        const m = word.match(/\/usr\/local\/bin\/(railyard[-a-z]*)/);
        if (m) assert(copied.includes(m[1]), `${label}: ${m[1]} is not in the image`);
      }
    }
  for (const b of ["railyard-cni", "railyard-sbr"]) assert(JSON.stringify(ds.spec.template.spec.initContainers).includes(b), `the init container does not install ${b}`);
  assert(images.size === 1, `images: ${[...images]}`);
  const bench = JSON.parse(configMap.data["validate.json"]).benchmark.command;
  assert(copied.includes(path.basename(bench)), `validate.json runs ${bench}, which the image does not have`);
});

check("least privilege: no API token for the device plugin or the MPIJob; the validator's --apply only slices, its own rules and Nodes; the DRA driver only its slices, get nodes and claims, its own entries in claim status and create Events", () => {
  assert(find("ServiceAccount", "railyard-device-plugin").automountServiceAccountToken === false, "device plugin SA mounts a token");
  assert(ds.spec.template.spec.automountServiceAccountToken === false, "the DaemonSet mounts a token");
  assert(find("ServiceAccount", "railyard-validate").automountServiceAccountToken === false, "validator SA mounts a token by default");
  assert(JSON.stringify(find("ClusterRole", "railyard-validate-apply").rules) === JSON.stringify([
    { apiGroups: ["resource.k8s.io"], resources: ["resourceslices"], verbs: ["list"] },
    { apiGroups: ["resource.k8s.io"], resources: ["devicetaintrules"], verbs: ["get", "list", "create", "update", "delete"] },
    { apiGroups: [""], resources: ["nodes"], verbs: ["get", "patch"] }]), "the validator's role grows");
  const binding = find("ClusterRoleBinding", "railyard-validate-apply");
  assert(JSON.stringify(binding.subjects) === JSON.stringify([{ kind: "ServiceAccount", name: "railyard-validate", namespace: "railyard-system" }]), "the validator's role is bound to someone else");
  // The Jobs that --apply mount the token; the MPIJob does not apply and mounts none.
  for (const name of ["railyard-validate", "railyard-validate-fleet"]) {
    const spec = find("Job", name).spec.template.spec;
    const args = spec.containers[0].args;
    assert(args.includes("--apply") && spec.automountServiceAccountToken === true && spec.serviceAccountName === "railyard-validate", `${name}: --apply without its token, or a token without --apply`);
    assert(spec.tolerations.some((t) => t.key === "railyard.io/unvalidated" && t.effect === "NoSchedule"), `${name} does not tolerate the bring-up gate`);
  }
  for (const [role, r] of Object.entries(find("MPIJob", "railyard-validate-mpi").spec.mpiReplicaSpecs))
    assert(r.template.spec.automountServiceAccountToken === false, `the MPIJob's ${role} mounts a token`);
  const draRole = find("ClusterRole", "railyard-dra-driver");
  assert(JSON.stringify(draRole.rules) === JSON.stringify([
    { apiGroups: ["resource.k8s.io"], resources: ["resourceslices"], verbs: ["get", "list", "create", "update", "delete"] },
    { apiGroups: ["resource.k8s.io"], resources: ["resourceclaims"], verbs: ["get"] },
    { apiGroups: ["resource.k8s.io"], resources: ["resourceclaims/status"], verbs: ["update"] },
    { apiGroups: ["resource.k8s.io"], resourceNames: ["railyard.io"], resources: ["resourceclaims/driver"], verbs: ["associated-node:update"] },
    { apiGroups: [""], resources: ["nodes"], verbs: ["get"] },
    { apiGroups: [""], resources: ["events"], verbs: ["create"] }]), JSON.stringify(draRole.rules));
  for (const c of [...ds.spec.template.spec.initContainers, ...ds.spec.template.spec.containers,
    ...dra.spec.template.spec.initContainers, ...dra.spec.template.spec.containers]) {
    assert(c.securityContext?.allowPrivilegeEscalation === false, `${c.name}: privilege escalation`);
    assert(JSON.stringify(c.securityContext?.capabilities?.drop) === '["ALL"]', `${c.name}: capabilities not dropped`);
    assert(c.resources?.requests && c.resources?.limits?.memory, `${c.name}: requests and a memory limit`);
  }
});

console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed ? 1 : 0);
