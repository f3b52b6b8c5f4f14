//! JSON shaped like the objects the conversions read — a `core/v1` Pod, a `core/v1` Node, a
//! `scheduling.k8s.io/v1alpha2` PodGroup — generated from the input's bytes: each byte a
//! choice of which fields are present and what they hold, so that most inputs deserialize and
//! reach the conversion, with arbitrary values (names, priorities, operators, effects, and
//! quantities from [`Parts`]) where it reads them.

use serde_json::{json, Map, Value};

use super::bytes::Bytes;
use super::quantity::Parts;

/// Names, namespaces, uids, label keys and values, topology keys.
const STRINGS: [&str; 16] = [
    "ml",
    "trainer-0",
    "a",
    "default",
    "gpu-0",
    "",
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "nvidia.com/gpu",
    "node.kubernetes.io/unschedulable",
    "\u{e4}\u{2603}",
    "x-y.z_9",
    "ml",
    "trainer",
    "0b6b7c1e-8f0a-4c8e",
    "Always",
];

/// Resource names: the ones the conversions single out (`cpu`, `memory` and the byte-counted),
/// extended resources, and names that only look like them.
pub const RESOURCES: [&str; 16] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "hugepages-2Mi",
    "hugepages-1Gi",
    "nvidia.com/gpu",
    "pods",
    "example.com/foo",
    "cpu",
    "memory",
    "nvidia.com/gpu",
    "",
    "CPU",
    "hugepages-",
    "requests.cpu",
    "memory",
];

/// Quantities written as JSON numbers (k8s-openapi takes those too).
const NUMBERS: [&str; 8] = [
    "0",
    "1",
    "-1",
    "1.5",
    "1e3",
    "9223372036854775808",
    "0.001",
    "8",
];

const CONTAINER_NAMES: [&str; 4] = ["main", "sidecar", "", "main"];
const RESTART_POLICIES: [Option<&str>; 4] =
    [None, Some("Always"), Some("OnFailure"), Some("Always")];
const OPERATORS: [&str; 8] = [
    "", "Equal", "Exists", "Lt", "Gt", "equal", "Exists", "Equal",
];
const EFFECTS: [&str; 8] = [
    "",
    "NoSchedule",
    "PreferNoSchedule",
    "NoExecute",
    "Bogus",
    "NoSchedule",
    "noschedule",
    "NoExecute",
];
const PRIORITIES: [i64; 8] = [
    0,
    1,
    -1,
    1000,
    2_147_483_647,
    -2_147_483_648,
    2_000_000_000,
    1 << 40,
];
const TIMES: [&str; 8] = [
    "2024-01-01T00:00:00Z",
    "1969-12-31T23:59:59Z",
    "2600-01-01T00:00:00Z",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "2024-02-30T00:00:00Z",
    "not a time",
    "1970-01-01T00:00:00.000000001Z",
];
const MIN_COUNTS: [i64; 8] = [1, 2, 4, 0, -1, 2_147_483_647, 3, 1 << 33];
const HOST_PORTS: [i64; 4] = [0, 80, -1, 65535];

/// The generator: the input's bytes, and every quantity written so far (its parts, for the
/// oracle).
pub struct Gen<'a> {
    /// The choices.
    pub b: Bytes<'a>,
    /// The quantities written, in order.
    pub quantities: Vec<Parts>,
}

impl<'a> Gen<'a> {
    /// A generator reading `bytes`.
    pub fn new(bytes: &'a [u8]) -> Gen<'a> {
        Gen {
            b: Bytes::new(bytes),
            quantities: Vec::new(),
        }
    }

    fn string(&mut self) -> Value {
        Value::from(self.b.pick(&STRINGS))
    }

    /// A map of up to three labels.
    fn labels(&mut self) -> Value {
        let n = self.b.below(4);
        let map: Map<String, Value> = (0..n)
            .map(|_| (self.b.pick(&STRINGS).to_owned(), self.string()))
            .collect();
        Value::Object(map)
    }

    /// A quantity: its parts written as a string (recorded), or now and then a JSON number.
    fn quantity(&mut self, as_number: Option<usize>) -> Value {
        if let Some(i) = as_number {
            return serde_json::from_str(NUMBERS[i % NUMBERS.len()]).expect("a JSON number");
        }
        let parts = Parts::read(&mut self.b);
        let text = parts.text();
        self.quantities.push(parts);
        Value::from(text)
    }

    /// A resource list of up to three entries: a byte each (low 4 bits the name, bit 7 a JSON
    /// number whose value bits 4–6 pick), then the quantity.
    pub fn resources(&mut self) -> Value {
        let n = self.b.below(4);
        let mut map = Map::new();
        for _ in 0..n {
            let e = self.b.byte();
            let name = RESOURCES[usize::from(e & 15)];
            let number = (e & 128 != 0).then_some(usize::from(e >> 4) & 7);
            map.insert(name.to_owned(), self.quantity(number));
        }
        Value::Object(map)
    }

    fn metadata(&mut self, h: u8, name: bool, namespace: bool, uid: bool) -> Value {
        let mut meta = Map::new();
        if name {
            meta.insert("name".into(), self.string());
        }
        if namespace {
            meta.insert("namespace".into(), self.string());
        }
        if uid {
            meta.insert("uid".into(), self.string());
        }
        if h & 32 != 0 {
            meta.insert("labels".into(), self.labels());
        }
        if h & 64 != 0 {
            meta.insert("creationTimestamp".into(), self.b.pick(&TIMES).into());
        }
        Value::Object(meta)
    }

    /// A container: a byte (bit 0 requests, bit 1 limits, bits 2–3 the restart policy, bit 4
    /// a port on the host), its name, then its lists.
    fn container(&mut self) -> Value {
        let c = self.b.byte();
        let mut container = Map::new();
        container.insert("name".into(), self.b.pick(&CONTAINER_NAMES).into());
        let mut resources = Map::new();
        if c & 1 != 0 {
            resources.insert("requests".into(), self.resources());
        }
        if c & 2 != 0 {
            resources.insert("limits".into(), self.resources());
        }
        if c & 3 != 0 {
            container.insert("resources".into(), Value::Object(resources));
        }
        if let Some(policy) = RESTART_POLICIES[usize::from(c >> 2) & 3] {
            container.insert("restartPolicy".into(), policy.into());
        }
        if c & 16 != 0 {
            let port = self.b.pick(&HOST_PORTS);
            container.insert(
                "ports".into(),
                json!([{"containerPort": 8080, "hostPort": port}]),
            );
        }
        Value::Object(container)
    }

    fn containers(&mut self) -> Value {
        let n = self.b.pick(&[1, 1, 2, 3, 0, 1, 2, 1]);
        Value::Array((0..n).map(|_| self.container()).collect())
    }

    /// A Pod: a metadata byte (bits 0–2 all set: drop one of name, namespace, uid, spec by
    /// bits 3–4; bit 5 labels; bit 6 a creation time; bit 7 bound to a node), a spec byte
    /// (bit 0 init containers, 1 overhead, 2 pod-level resources, 3 priority, 4 a scheduling
    /// group, 5 a node selector, 6 tolerations, 7 a scheduling constraint), then each part.
    pub fn pod(&mut self) -> Value {
        let h = self.b.byte();
        let drop = if h & 7 == 7 { Some((h >> 3) & 3) } else { None };
        let meta = self.metadata(h, drop != Some(0), drop != Some(1), drop != Some(2));
        let f = self.b.byte();
        let mut spec = Map::new();
        spec.insert("containers".into(), self.containers());
        if f & 1 != 0 {
            spec.insert("initContainers".into(), self.containers());
        }
        if f & 2 != 0 {
            spec.insert("overhead".into(), self.resources());
        }
        if f & 4 != 0 {
            let r = self.b.byte();
            let mut pod_level = Map::new();
            if r & 1 != 0 {
                pod_level.insert("requests".into(), self.resources());
            }
            if r & 2 != 0 {
                pod_level.insert("limits".into(), self.resources());
            }
            spec.insert("resources".into(), Value::Object(pod_level));
        }
        if f & 8 != 0 {
            spec.insert("priority".into(), self.b.pick(&PRIORITIES).into());
        }
        if f & 16 != 0 {
            let group = match self.b.below(4) {
                0 => json!({}),
                _ => json!({"podGroupName": self.string()}),
            };
            spec.insert("schedulingGroup".into(), group);
        }
        if f & 32 != 0 {
            spec.insert("nodeSelector".into(), self.labels());
        }
        if f & 64 != 0 {
            let n = self.b.below(3) + 1;
            let tolerations: Vec<Value> = (0..n).map(|_| self.toleration()).collect();
            spec.insert("tolerations".into(), tolerations.into());
        }
        if f & 128 != 0 {
            self.constraint(&mut spec);
        }
        if h & 128 != 0 {
            spec.insert("nodeName".into(), self.string());
        }
        let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta});
        if drop != Some(3) {
            pod["spec"] = Value::Object(spec);
        }
        pod
    }

    fn toleration(&mut self) -> Value {
        let t = self.b.byte();
        let mut map = Map::new();
        if t & 1 != 0 {
            map.insert("key".into(), self.string());
        }
        map.insert("operator".into(), OPERATORS[usize::from(t >> 1) & 7].into());
        if t & 16 != 0 {
            map.insert("value".into(), self.string());
        }
        map.insert("effect".into(), EFFECTS[usize::from(t >> 5) & 7].into());
        Value::Object(map)
    }

    /// One of the constraints the conversion refuses or ignores (a byte picks it).
    fn constraint(&mut self, spec: &mut Map<String, Value>) {
        let key = self.string();
        let term = json!({"topologyKey": key, "labelSelector": {"matchLabels": {"app": "a"}}});
        let node_term =
            json!({"matchExpressions": [{"key": key, "operator": "In", "values": ["a"]}]});
        let (field, value) = match self.b.below(12) {
            0 => ("schedulingGates", json!([{"name": "gate"}])),
            1 => (
                "affinity",
                json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    {"nodeSelectorTerms": [node_term]}}}),
            ),
            2 => (
                "affinity",
                json!({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
                    [{"weight": 1, "preference": node_term}]}}),
            ),
            3 => (
                "affinity",
                json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}),
            ),
            4 => (
                "affinity",
                json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}),
            ),
            5 => (
                "affinity",
                json!({"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
                    [{"weight": 5, "podAffinityTerm": term}], "requiredDuringSchedulingIgnoredDuringExecution": []}}),
            ),
            6 | 7 => {
                let when = if self.b.below(2) == 0 {
                    "DoNotSchedule"
                } else {
                    "ScheduleAnyway"
                };
                (
                    "topologySpreadConstraints",
                    json!([{"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": when}]),
                )
            }
            8 => ("resourceClaims", json!([{"name": "gpu"}])),
            9 => ("hostNetwork", json!(true)),
            10 => (
                "volumes",
                json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]),
            ),
            _ => ("volumes", json!([{"name": "scratch", "emptyDir": {}}])),
        };
        spec.insert(field.into(), value);
    }

    /// A Node: a byte (bits 0–2 all set: no name; bit 3 labels; bit 4 taints; bit 5
    /// cordoned; bit 6 `status.allocatable`; bit 7 `status.capacity`), then each part.
    pub fn node(&mut self) -> Value {
        let h = self.b.byte();
        let mut meta = Map::new();
        if h & 7 != 7 {
            meta.insert("name".into(), self.string());
        }
        if h & 8 != 0 {
            meta.insert("labels".into(), self.labels());
        }
        let mut spec = Map::new();
        if h & 16 != 0 {
            let n = self.b.below(3) + 1;
            let taints: Vec<Value> = (0..n)
                .map(|_| {
                    let t = self.b.byte();
                    let mut taint = Map::new();
                    taint.insert("key".into(), self.string());
                    if t & 1 != 0 {
                        taint.insert("value".into(), self.string());
                    }
                    taint.insert("effect".into(), EFFECTS[usize::from(t >> 1) & 7].into());
                    Value::Object(taint)
                })
                .collect();
            spec.insert("taints".into(), taints.into());
        }
        if h & 32 != 0 {
            spec.insert("unschedulable".into(), true.into());
        }
        let mut status = Map::new();
        if h & 64 != 0 {
            status.insert("allocatable".into(), self.resources());
        }
        if h & 128 != 0 {
            status.insert("capacity".into(), self.resources());
        }
        json!({"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec, "status": status})
    }

    /// A PodGroup: a byte (bits 0–2 all set: drop the name or, bit 3, the namespace; bits 3–4
    /// the policy: basic, gang, both, neither; bit 5 a topology constraint; bit 6 resource
    /// claims; bit 7 fields not read: priority, disruption mode), then each part.
    pub fn pod_group(&mut self) -> Value {
        let h = self.b.byte();
        let drop = if h & 7 == 7 { Some((h >> 3) & 1) } else { None };
        let meta = self.metadata(0, drop != Some(0), drop != Some(1), false);
        let mut policy = Map::new();
        let which = (h >> 3) & 3;
        if which == 0 || which == 2 {
            policy.insert("basic".into(), json!({}));
        }
        if which == 1 || which == 2 {
            let min = self.b.pick(&MIN_COUNTS);
            policy.insert("gang".into(), json!({ "minCount": min }));
        }
        let mut spec = Map::new();
        spec.insert("schedulingPolicy".into(), Value::Object(policy));
        if h & 32 != 0 {
            let topology = match self.b.below(3) {
                0 => json!([]),
                _ => json!([{"key": self.string()}]),
            };
            spec.insert(
                "schedulingConstraints".into(),
                json!({ "topology": topology }),
            );
        }
        if h & 64 != 0 {
            let claims = match self.b.below(2) {
                0 => json!([]),
                _ => json!([{"name": "shared"}]),
            };
            spec.insert("resourceClaims".into(), claims);
        }
        if h & 128 != 0 {
            spec.insert("priority".into(), self.b.pick(&PRIORITIES).into());
            spec.insert("disruptionMode".into(), "PodGroup".into());
        }
        json!({
            "apiVersion": "scheduling.k8s.io/v1alpha2",
            "kind": "PodGroup",
            "metadata": meta,
            "spec": spec,
        })
    }
}
