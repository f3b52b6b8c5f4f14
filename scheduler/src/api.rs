//! Every write this scheduler makes to the API server, each through the client's throttle:
//! a pod's binding (`pods/binding`, with the pod's uid as precondition, as kube-scheduler's
//! DefaultBinder), its nominated node (the placement record, H7), its `PodScheduled`
//! condition, a PodGroup's `PodGroupScheduled` condition, and Events.

use gangsched::scheduler::{PodGroupScheduled, PodScheduled};
use gangsched::{GroupKey, Pod};
use k8s_openapi::api::core::v1::{self as core, ObjectReference};
use k8s_openapi::api::scheduling::v1beta1::PodGroup;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::{Api, Client};
use serde_json::json;

use crate::throttle::Throttle;

/// The field manager and event reporter this scheduler writes as.
pub const MANAGER: &str = "gangway-scheduler";

/// A client that writes what the scheduler decided. Clones share the throttle.
#[derive(Clone)]
pub struct Writer {
    client: Client,
    throttle: Throttle,
    recorder: Recorder,
}

/// How a failed write is to be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The object is gone (404).
    NotFound,
    /// A conflict (409): for a binding, the pod is bound already.
    Conflict,
    /// Anything else: the server or the connection failed.
    Other,
}

/// What kind of refusal `error` is.
pub fn refusal(error: &kube::Error) -> Refusal {
    match error {
        kube::Error::Api(status) if status.is_not_found() => Refusal::NotFound,
        kube::Error::Api(status) if status.code == 409 => Refusal::Conflict,
        _ => Refusal::Other,
    }
}

impl Writer {
    /// A writer on `client`, reporting events as `instance` of gangway-scheduler.
    pub fn new(client: Client, throttle: Throttle, instance: &str) -> Writer {
        let reporter = Reporter {
            controller: MANAGER.to_owned(),
            instance: Some(instance.to_owned()),
        };
        Writer {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            throttle,
        }
    }

    fn pods(&self, namespace: &str) -> Api<core::Pod> {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// Binds `pod` to `node` through `pods/binding`; the pod's uid is the precondition, so a
    /// pod deleted and created again under its name is not bound in its place.
    pub async fn bind(&self, pod: &Pod, node: &str) -> Result<(), kube::Error> {
        self.throttle.acquire().await;
        let binding = core::Binding {
            metadata: ObjectMeta {
                name: Some(pod.name().to_owned()),
                namespace: Some(pod.namespace().to_owned()),
                uid: Some(pod.id().as_str().to_owned()),
                ..ObjectMeta::default()
            },
            target: ObjectReference {
                kind: Some("Node".to_owned()),
                name: Some(node.to_owned()),
                ..ObjectReference::default()
            },
        };
        let _: serde_json::Value = self
            .pods(pod.namespace())
            .create_subresource("binding", pod.name(), &PostParams::default(), &binding)
            .await?;
        Ok(())
    }

    /// Sets (or with `None` clears) `status.nominatedNodeName` of the pod `namespace/name`.
    pub async fn nominate(
        &self,
        namespace: &str,
        name: &str,
        node: Option<&str>,
    ) -> Result<(), kube::Error> {
        self.throttle.acquire().await;
        let patch = json!({"status": {"nominatedNodeName": node}});
        self.pods(namespace)
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        Ok(())
    }

    /// Whether the pod `namespace/name` is bound (`spec.nodeName` set), as the API has it now.
    pub async fn is_bound(&self, namespace: &str, name: &str) -> Result<bool, kube::Error> {
        self.throttle.acquire().await;
        let pod = self.pods(namespace).get(name).await?;
        Ok(pod
            .spec
            .and_then(|s| s.node_name)
            .is_some_and(|n| !n.is_empty()))
    }

    /// Writes `pod`'s `PodScheduled` condition (a strategic merge on `type`, as kube-scheduler
    /// patches a pod's status).
    pub async fn pod_scheduled(
        &self,
        pod: &Pod,
        condition: &PodScheduled,
    ) -> Result<(), kube::Error> {
        let status = condition.status_str();
        self.pod_condition(pod, status, condition.reason, &condition.message)
            .await
    }

    /// Writes `pod`'s `PodScheduled` condition as `False`, `Unschedulable`, with `message`.
    pub async fn pod_unschedulable(&self, pod: &Pod, message: &str) -> Result<(), kube::Error> {
        self.pod_condition(pod, "False", PodScheduled::UNSCHEDULABLE, message)
            .await
    }

    async fn pod_condition(
        &self,
        pod: &Pod,
        status: &str,
        reason: &str,
        message: &str,
    ) -> Result<(), kube::Error> {
        self.throttle.acquire().await;
        let patch = json!({"status": {"conditions": [{
            "type": PodScheduled::TYPE,
            "status": status,
            "reason": reason,
            "message": message,
            "lastTransitionTime": now(),
        }]}});
        self.pods(pod.namespace())
            .patch_status(
                pod.name(),
                &PatchParams::default(),
                &Patch::Strategic(&patch),
            )
            .await?;
        Ok(())
    }

    /// Writes the `PodGroupScheduled` condition of the PodGroup `key` (server-side apply of
    /// that one condition, as this scheduler's field manager).
    pub async fn pod_group_scheduled(
        &self,
        key: &GroupKey,
        condition: &PodGroupScheduled,
    ) -> Result<(), kube::Error> {
        self.throttle.acquire().await;
        let apply = json!({
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": key.name(), "namespace": key.namespace()},
            "status": {"conditions": [{
                "type": PodGroupScheduled::TYPE,
                "status": condition.status_str(),
                "reason": condition.reason,
                "message": condition.message,
                "lastTransitionTime": now(),
            }]},
        });
        let groups: Api<PodGroup> = Api::namespaced(self.client.clone(), key.namespace());
        groups
            .patch_status(
                key.name(),
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(&apply),
            )
            .await?;
        Ok(())
    }

    /// Publishes an Event about `pod` (events.k8s.io/v1, repeats folded into a series).
    pub async fn pod_event(
        &self,
        pod: &Pod,
        warning: bool,
        reason: &str,
        note: String,
    ) -> Result<(), kube::Error> {
        self.throttle.acquire().await;
        let event = Event {
            type_: if warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: reason.to_owned(),
            note: Some(note),
            action: "Scheduling".to_owned(),
            secondary: None,
        };
        let regarding = ObjectReference {
            api_version: Some("v1".to_owned()),
            kind: Some("Pod".to_owned()),
            name: Some(pod.name().to_owned()),
            namespace: Some(pod.namespace().to_owned()),
            uid: Some(pod.id().as_str().to_owned()),
            ..ObjectReference::default()
        };
        self.recorder.publish(&event, &regarding).await
    }
}

/// Now, as the API writes a time (RFC 3339, seconds).
fn now() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .round(k8s_openapi::jiff::Unit::Second)
        .map(|t| t.to_string())
        .unwrap_or_default()
}
