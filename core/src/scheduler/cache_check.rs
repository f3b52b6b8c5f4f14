//! The cache's own check of I5: every pod on the node it names, every node's requested
//! resources the sum of its pods', the assumed index exact, a deleted node kept only while
//! pods are on it, the node index (once built) true to the nodes.

use super::cache::{CacheState, PodPhase};
use crate::Resources;

impl CacheState {
    /// Verifies the node part of I5: each node's requested resources are the (saturating) sum
    /// of its pods' requests; each pod is on exactly the node it names, and that node is in
    /// the cache; the assumed index lists exactly the assumed pods; a deleted node is kept only
    /// while pods are on it; and the node index, once built, files exactly the live nodes, by
    /// class and fill. The error describes the first violation found.
    pub fn check(&self) -> Result<(), String> {
        // The table holds its pods in no order: the violation reported is the least pod's.
        let pod_violation = self
            .pods
            .iter()
            .filter_map(|(id, entry)| {
                let Some(node) = self.nodes.get(&entry.node) else {
                    return Some((
                        id,
                        format!("pod {id} is on unknown node {} (I5)", entry.node),
                    ));
                };
                if !node.pods.contains(id) {
                    let why = format!("pod {id} names node {} but is not on it (I5)", entry.node);
                    return Some((id, why));
                }
                if (entry.phase == PodPhase::Assumed) != self.assumed.contains(id) {
                    let why = format!("pod {id} is {:?} but indexed otherwise", entry.phase);
                    return Some((id, why));
                }
                None
            })
            .min_by(|a, b| a.0.cmp(b.0));
        if let Some((_, why)) = pod_violation {
            return Err(why);
        }
        if let Some(id) = self.assumed.iter().find(|id| !self.pods.contains_key(id)) {
            return Err(format!(
                "pod {id} is indexed as assumed but not in the cache"
            ));
        }
        for (name, node) in &self.nodes {
            let mut sum = Resources::ZERO;
            for id in node.pods.iter() {
                match self.pods.get(id) {
                    Some(entry) if entry.node == *name => sum = &sum + &entry.requests,
                    Some(entry) => {
                        return Err(format!(
                            "pod {id} is on node {name} but names node {} (I5)",
                            entry.node
                        ))
                    }
                    None => return Err(format!("unknown pod {id} is on node {name} (I5)")),
                }
            }
            if sum != node.requested {
                return Err(format!(
                    "node {name} has {} requested but its pods request {sum} (I5)",
                    node.requested
                ));
            }
            if node.deleted && node.pods.is_empty() {
                return Err(format!(
                    "deleted node {name} is kept with no pod on it: it should be gone"
                ));
            }
        }
        if let Some(index) = self.node_index() {
            index.check(&self.nodes)?;
        }
        Ok(())
    }
}
