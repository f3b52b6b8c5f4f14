/// A plugin's verdict on whether a cluster event may make a rejected pod schedulable
/// (kube-scheduler's `QueueingHint`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueueingHint {
    /// The event may help: retry the pod.
    Queue,
    /// The event cannot help this pod: leave it where it is.
    QueueSkip,
}
