//! The cluster as the core sees it: the watches' Nodes, PodGroups and Pods turned into the
//! core's add, update and delete events, in one task that owns what the core was told.
//!
//! - A relist (at start, and after a watch expired with `410 Gone` or broke) ends by deleting
//!   what the list no longer has, so nothing deleted during the gap stays in the core.
//! - Pods bound to a node the node watch has not shown yet are kept aside and added when it
//!   comes ("nothing is lost"); Nodes are watched first, so this is rare.
//! - Bound pods of every scheduler count against their node and their group (a member bound by
//!   another actor is counted as bound); unbound pods only when their `schedulerName` is ours.
//! - One of our pods the core cannot take (a constraint it does not honour) is reported once,
//!   as an Event and its `PodScheduled` condition; one naming a PodGroup that does not exist
//!   is reported and waits for it (the core gates it).
//! - An update that changes nothing the core reads (our own status writes) is skipped.

use std::collections::{HashMap, HashSet};

use gangsched::scheduler::Node;
use gangsched::{Clock, GroupKey, Pod, PodGroup, Scheduler, SystemClock};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::scheduling::v1beta1;
use kube::runtime::watcher::Event;

use crate::api::Writer;
use crate::health::{Health, Watched};

/// One watch's event (boxed: the objects are large and of very different sizes).
pub enum Change {
    /// From the Node watch.
    Node(Box<Event<core::Node>>),
    /// From the PodGroup watch.
    Group(Box<Event<v1beta1::PodGroup>>),
    /// From the Pod watch.
    Pod(Box<Event<core::Pod>>),
}

/// What the core was told, and how to tell it more.
pub struct Mirror {
    scheduler: Scheduler,
    clock: SystemClock,
    scheduler_name: String,
    health: Health,
    writer: Writer,
    nodes: HashMap<String, Node>,
    groups: HashMap<GroupKey, PodGroup>,
    /// Pods the core knows, by uid.
    pods: HashMap<String, Pod>,
    /// Bound pods waiting for their node to be known, by uid.
    parked: HashMap<String, Pod>,
    /// Our pods the core cannot take, by uid, with why (reported once).
    refused: HashMap<String, String>,
    /// Our pods reported as naming a missing PodGroup.
    missing_group: HashSet<String>,
    /// Whether the PodGroups have been listed once (before, a missing group is only not listed yet).
    groups_listed: bool,
    /// The keys seen by each watch's relist under way.
    listing: [Option<HashSet<String>>; 3],
}

/// Whether an event stream is the end of the world: the core shut down.
#[derive(Debug, PartialEq, Eq)]
pub struct ShutDown;

impl Mirror {
    /// A mirror feeding `scheduler`, for pods named `scheduler_name`.
    pub fn new(
        scheduler: Scheduler,
        clock: SystemClock,
        scheduler_name: String,
        health: Health,
        writer: Writer,
    ) -> Mirror {
        Mirror {
            scheduler,
            clock,
            scheduler_name,
            health,
            writer,
            nodes: HashMap::new(),
            groups: HashMap::new(),
            pods: HashMap::new(),
            parked: HashMap::new(),
            refused: HashMap::new(),
            missing_group: HashSet::new(),
            groups_listed: false,
            listing: [None, None, None],
        }
    }

    /// Tells the core about one change.
    pub async fn apply(&mut self, change: Change) -> Result<(), ShutDown> {
        if self.scheduler.is_shut_down() {
            return Err(ShutDown);
        }
        match change {
            Change::Node(event) => self.relisted(Watched::Nodes, *event, |m, node| {
                let name = node.metadata.name.clone().unwrap_or_default();
                m.node_applied(&node);
                name
            }),
            Change::Group(event) => self.relisted(Watched::PodGroups, *event, |m, group| {
                let key = group_key_of(&group)
                    .map(|k| k.to_string())
                    .unwrap_or_default();
                m.group_applied(&group);
                key
            }),
            Change::Pod(event) => {
                let mut deferred = Vec::new();
                self.relisted(Watched::Pods, *event, |m, pod| {
                    let uid = pod.metadata.uid.clone().unwrap_or_default();
                    if let Some(report) = m.pod_applied(&pod) {
                        deferred.push(report);
                    }
                    uid
                });
                for report in deferred {
                    report.send(&self.writer).await;
                }
            }
        }
        Ok(())
    }

    /// An event of one watch: applied or deleted, and a relist's end deletes what it missed.
    fn relisted<K>(
        &mut self,
        what: Watched,
        event: Event<K>,
        mut apply: impl FnMut(&mut Self, K) -> String,
    ) where
        K: Removable,
    {
        let slot = what as usize;
        match event {
            Event::Init => self.listing[slot] = Some(HashSet::new()),
            Event::InitApply(object) => {
                let key = apply(self, object);
                if let Some(seen) = &mut self.listing[slot] {
                    seen.insert(key);
                }
            }
            Event::InitDone => {
                let seen = self.listing[slot].take().unwrap_or_default();
                let gone: Vec<String> = self
                    .keys(what)
                    .into_iter()
                    .filter(|key| !seen.contains(key))
                    .collect();
                if !gone.is_empty() {
                    tracing::info!(resource = ?what, gone = gone.len(), "relist: deleted while unwatched");
                }
                for key in gone {
                    self.remove(what, &key);
                }
                self.health.set_synced(what);
                self.groups_listed |= what == Watched::PodGroups;
                tracing::info!(resource = ?what, "listed");
            }
            Event::Apply(object) => {
                apply(self, object);
            }
            Event::Delete(object) => {
                let key = object.key();
                self.remove(what, &key);
            }
        }
    }

    fn keys(&self, what: Watched) -> Vec<String> {
        match what {
            Watched::Nodes => self.nodes.keys().cloned().collect(),
            Watched::PodGroups => self.groups.keys().map(ToString::to_string).collect(),
            Watched::Pods => self
                .pods
                .keys()
                .chain(self.parked.keys())
                .chain(self.refused.keys())
                .cloned()
                .collect(),
        }
    }

    fn remove(&mut self, what: Watched, key: &str) {
        match what {
            Watched::Nodes => self.node_deleted(key),
            Watched::PodGroups => {
                if let Some((k, _)) = self.groups.iter().find(|(k, _)| k.to_string() == key) {
                    let k = k.clone();
                    self.groups.remove(&k);
                    if let Err(e) = self.scheduler.delete_group(&k) {
                        tracing::warn!(group = %k, error = %e, "core refused a group delete");
                    }
                }
            }
            Watched::Pods => self.pod_gone(key),
        }
    }

    fn now(&self) -> gangsched::Time {
        self.clock.now()
    }

    fn node_applied(&mut self, raw: &core::Node) {
        let node = match Node::try_from(raw) {
            Ok(node) => node,
            Err(e) => {
                tracing::warn!(error = %e, "node not usable: cannot read it");
                return;
            }
        };
        let name = node.name().to_owned();
        if self.nodes.get(&name) == Some(&node) {
            return;
        }
        let now = self.now();
        let result = if self.nodes.contains_key(&name) {
            self.scheduler
                .update_node(node.clone(), now)
                .map(drop)
                .map_err(|e| e.to_string())
        } else {
            self.scheduler
                .add_node(node.clone(), now)
                .map_err(|e| e.to_string())
        };
        match result {
            Ok(()) => {
                self.nodes.insert(name.clone(), node);
                self.unpark(&name);
            }
            Err(e) => tracing::warn!(node = %name, error = %e, "core refused a node"),
        }
    }

    fn node_deleted(&mut self, name: &str) {
        if self.nodes.remove(name).is_none() {
            return;
        }
        match self.scheduler.delete_node(name, self.now()) {
            Ok(pods) => tracing::info!(node = name, pods = pods.len(), "node deleted"),
            Err(e) => tracing::warn!(node = name, error = %e, "core refused a node delete"),
        }
    }

    /// Bound pods that waited for `node`.
    fn unpark(&mut self, node: &str) {
        let waiting: Vec<String> = self
            .parked
            .iter()
            .filter(|(_, pod)| pod.node() == Some(node))
            .map(|(uid, _)| uid.clone())
            .collect();
        for uid in waiting {
            if let Some(pod) = self.parked.remove(&uid) {
                self.add_pod(uid, pod);
            }
        }
    }

    fn group_applied(&mut self, raw: &v1beta1::PodGroup) {
        let group = match PodGroup::try_from(raw) {
            Ok(group) => group,
            Err(e) => {
                tracing::warn!(error = %e, "pod group not usable: its pods wait as if it did not exist");
                return;
            }
        };
        let key = group.key().clone();
        if self.groups.get(&key) == Some(&group) {
            return;
        }
        let now = self.now();
        let result = if self.groups.contains_key(&key) {
            self.scheduler
                .update_group(group.clone(), now)
                .map_err(|e| e.to_string())
        } else {
            self.scheduler
                .add_group(group.clone(), now)
                .map_err(|e| e.to_string())
        };
        match result {
            Ok(()) => {
                self.groups.insert(key.clone(), group);
                self.missing_group
                    .retain(|uid| self.pods.get(uid).and_then(Pod::group_key) != Some(&key));
            }
            Err(e) => tracing::warn!(group = %key, error = %e, "core refused a pod group"),
        }
    }

    /// A pod added or changed; returns a report to write about it, if any.
    fn pod_applied(&mut self, raw: &core::Pod) -> Option<Report> {
        let uid = raw.metadata.uid.clone()?;
        let spec = raw.spec.as_ref()?;
        let phase = raw.status.as_ref().and_then(|s| s.phase.as_deref());
        if matches!(phase, Some("Succeeded" | "Failed")) {
            self.pod_gone(&uid);
            return None;
        }
        let bound = spec.node_name.as_deref().is_some_and(|n| !n.is_empty());
        let ours = spec.scheduler_name.as_deref() == Some(self.scheduler_name.as_str());
        if !bound && !ours {
            self.pod_gone(&uid);
            return None;
        }
        let pod = match convert(raw, bound) {
            Ok(pod) => pod,
            Err(why) => {
                self.pod_gone(&uid);
                if bound {
                    tracing::warn!(pod = %full_name(raw), error = %why, "bound pod not counted");
                    return None;
                }
                if why.contains("schedulingGates") {
                    tracing::debug!(pod = %full_name(raw), "gated: waits for its scheduling gates");
                    return None;
                }
                if self.refused.get(&uid) == Some(&why) {
                    return None;
                }
                tracing::warn!(pod = %full_name(raw), error = %why, "pod cannot be scheduled by gangway");
                self.refused.insert(uid, why.clone());
                return Some(Report::refused(raw, why));
            }
        };
        self.refused.remove(&uid);
        let report = self.missing_group_report(&uid, &pod, bound);
        match self.pods.get(&uid).cloned() {
            Some(old) if old == pod => {}
            Some(old) => match self
                .scheduler
                .update_pod(old.clone(), pod.clone(), self.now())
            {
                Ok(()) => {
                    self.pods.insert(uid, pod);
                }
                Err(gangsched::scheduler::UpdatePodError::UnknownNode { .. }) => {
                    // Bound to a node not seen yet: out of the core until it is.
                    self.pod_gone(&uid);
                    self.parked.insert(uid, pod);
                }
                Err(e) => {
                    tracing::warn!(pod = %pod.full_name(), error = %e, "core refused a pod update")
                }
            },
            None => {
                self.parked.remove(&uid);
                self.add_pod(uid, pod);
            }
        }
        report
    }

    /// Reported once: one of our unbound pods names a PodGroup not (yet) in the API.
    fn missing_group_report(&mut self, uid: &str, pod: &Pod, bound: bool) -> Option<Report> {
        let key = pod.group_key()?;
        if bound || self.groups.contains_key(key) || !self.groups_listed {
            return None;
        }
        if !self.missing_group.insert(uid.to_owned()) {
            return None;
        }
        tracing::warn!(pod = %pod.full_name(), group = %key, "pod names a pod group that does not exist: it waits for it");
        Some(Report {
            pod: pod.clone(),
            reason: "PodGroupNotFound",
            message: format!("pod group {key} does not exist; the pod waits for it"),
        })
    }

    fn add_pod(&mut self, uid: String, pod: Pod) {
        match self.scheduler.add_pod(pod.clone(), self.now()) {
            Ok(()) => {
                self.pods.insert(uid, pod);
            }
            Err(gangsched::scheduler::AddPodError::UnknownNode { pod, node }) => {
                tracing::debug!(pod = %pod.full_name(), node, "bound to a node not seen yet: kept until it is");
                self.parked.insert(uid, pod);
            }
            Err(e) => tracing::warn!(pod = %pod.full_name(), error = %e, "core refused a pod"),
        }
    }

    fn pod_gone(&mut self, uid: &str) {
        self.parked.remove(uid);
        self.refused.remove(uid);
        self.missing_group.remove(uid);
        if let Some(pod) = self.pods.remove(uid) {
            if let Err(e) = self.scheduler.delete_pod(&pod, self.now()) {
                tracing::warn!(pod = %pod.full_name(), error = %e, "core refused a pod delete");
            }
        }
    }
}

/// A report about one pod, written after the core was told.
pub struct Report {
    pod: Pod,
    reason: &'static str,
    message: String,
}

impl Report {
    fn refused(raw: &core::Pod, why: String) -> Report {
        let meta = &raw.metadata;
        let pod = Pod::new(
            meta.uid.clone().unwrap_or_default(),
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default(),
        );
        Report {
            pod,
            reason: "FailedScheduling",
            message: format!("gangway-scheduler cannot schedule this pod: {why}"),
        }
    }

    async fn send(self, writer: &Writer) {
        let name = self.pod.full_name();
        if let Err(e) = writer.pod_unschedulable(&self.pod, &self.message).await {
            tracing::warn!(pod = %name, error = %e, "could not write PodScheduled condition");
        }
        if let Err(e) = writer
            .pod_event(&self.pod, true, self.reason, self.message)
            .await
        {
            tracing::warn!(pod = %name, error = %e, "could not write event");
        }
    }
}

/// The core's pod. A bound pod is counted even with a constraint the core does not honour
/// (its requests matter, not how it got there): the constraints are dropped and it is
/// converted again.
pub fn convert(raw: &core::Pod, bound: bool) -> Result<Pod, String> {
    match Pod::try_from(raw) {
        Ok(pod) => Ok(pod),
        Err(e) if bound => {
            let mut stripped = raw.clone();
            if let Some(spec) = &mut stripped.spec {
                spec.affinity = None;
                spec.topology_spread_constraints = None;
                spec.resource_claims = None;
                spec.scheduling_gates = None;
                spec.volumes = None;
                for container in &mut spec.containers {
                    container.ports = None;
                }
            }
            Pod::try_from(&stripped).map_err(|_| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    }
}

fn full_name(raw: &core::Pod) -> String {
    format!(
        "{}/{}",
        raw.metadata.namespace.as_deref().unwrap_or_default(),
        raw.metadata.name.as_deref().unwrap_or_default()
    )
}

fn group_key_of(raw: &v1beta1::PodGroup) -> Option<GroupKey> {
    Some(GroupKey::new(
        raw.metadata.namespace.as_deref()?,
        raw.metadata.name.as_deref()?,
    ))
}

/// The key a deleted object is known by.
trait Removable {
    fn key(&self) -> String;
}

impl Removable for core::Node {
    fn key(&self) -> String {
        self.metadata.name.clone().unwrap_or_default()
    }
}

impl Removable for v1beta1::PodGroup {
    fn key(&self) -> String {
        group_key_of(self)
            .map(|k| k.to_string())
            .unwrap_or_default()
    }
}

impl Removable for core::Pod {
    fn key(&self) -> String {
        self.metadata.uid.clone().unwrap_or_default()
    }
}
