//! Renaming a [`CacheState`]: every pod under its image, on its node, in the pod map and in
//! the assumed index.

use super::cache::{CacheState, NodeEntry, PodEntry};
use crate::symmetry::{Relabel, Renamed};
use crate::sync::Arc;

/// The cache with every pod renamed — in its node's pod set, in the pod map and in the
/// assumed index alike; nodes, requests and phases kept. Keeps the node part of I5 that
/// [`CacheState::check`] verifies: each node's requested resources are its pods' requests, and
/// each pod is on exactly the node it names.
impl Renamed for CacheState {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> CacheState {
        let CacheState {
            nodes,
            pods,
            assumed,
            index,
        } = self;
        let nodes = nodes
            .iter()
            .map(|(name, node)| {
                let NodeEntry {
                    capacity,
                    labels,
                    taints,
                    requested,
                    pods,
                    deleted,
                } = node;
                let node = NodeEntry {
                    capacity: capacity.clone(),
                    labels: labels.clone(),
                    taints: taints.clone(),
                    requested: requested.clone(),
                    pods: Arc::new(pods.renamed(renaming)),
                    deleted: *deleted,
                };
                (renaming.node(name), node)
            })
            .collect();
        let pods = pods
            .iter()
            .map(|(id, entry)| {
                let PodEntry {
                    node,
                    requests,
                    phase,
                } = entry;
                let entry = PodEntry {
                    node: renaming.node(node),
                    requests: requests.clone(),
                    phase: *phase,
                };
                (renaming.id(id), entry)
            })
            .collect();
        let mut renamed = CacheState {
            nodes,
            pods,
            assumed: assumed.renamed(renaming),
            index: Default::default(),
        };
        // The node index names nodes: built anew for the renamed ones, if there was one.
        if index.get().is_some() {
            renamed.build_node_index();
        }
        renamed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::{Node, PodPhase, RemovedPod};
    use crate::symmetry::permutations;
    use crate::symmetry::PodRenaming;
    use crate::Resources;
    use crate::{Pod, PodId};

    /// Members a-0, a-1, a-2 of gang "a", each requesting something else, so that a renaming
    /// that moves a pod without its reservation shows in the nodes' sums.
    fn pods() -> [Pod; 3] {
        let mut i = 0;
        ["a-0", "a-1", "a-2"].map(|name| {
            i += 1;
            let requests = Resources::new(100 * i, 10 * i);
            Pod::new(name, "ns", name)
                .with_group("a")
                .with_requests(requests)
        })
    }

    /// The renaming that gives pod `i` the name of pod `perm[i]`.
    fn renaming(perm: [usize; 3]) -> PodRenaming {
        permutations::renaming(&pods(), perm)
    }

    /// What each step returned, with the pods it names.
    #[derive(Clone, Debug, PartialEq)]
    enum Step {
        Forgot(Option<String>),
        Removed(Option<RemovedPod>),
        NodeRemoved(Vec<PodId>),
    }

    impl Step {
        fn renamed(&self, g: &PodRenaming) -> Step {
            match self {
                Step::NodeRemoved(ids) => Step::NodeRemoved(ids.renamed(g)),
                other => other.clone(),
            }
        }
    }

    /// One run of assumes, a binding, a forget, an observed binding that moves a pod, a pod
    /// delete and a node delete on `p`; the final state and what the steps returned. Ends with
    /// a bound pod and an assumed pod sharing node n1 and another assumed pod on n2.
    fn run(p: &[Pod; 3]) -> (CacheState, Vec<Step>) {
        let mut c = CacheState::new();
        let mut steps = Vec::new();
        c.add_node(Node::new("n1", Resources::new(4000, 4000)))
            .unwrap();
        c.add_node(Node::new("n2", Resources::new(2000, 2000)))
            .unwrap();
        c.assume(&p[0], "n1").unwrap();
        c.assume(&p[1], "n1").unwrap();
        c.assume(&p[2], "n2").unwrap();
        c.finish_binding(p[0].id()).unwrap();
        steps.push(Step::Forgot(c.forget(p[1].id())));
        c.assume(&p[1], "n2").unwrap();
        c.add_bound(&p[2].clone().with_node("n1")).unwrap();
        steps.push(Step::Removed(c.remove_pod(p[0].id())));
        c.add_node(Node::new("n3", Resources::new(1000, 1000)))
            .unwrap();
        c.assume(&p[0], "n3").unwrap();
        steps.push(Step::NodeRemoved(c.remove_node("n3").unwrap()));
        // The deleted node keeps the pod until it is forgotten (then the node is gone).
        steps.push(Step::Forgot(c.forget(p[0].id())));
        c.assume(&p[0], "n1").unwrap();
        c.check().unwrap();
        assert_eq!((c.assumed_count(), c.bound_count()), (2, 1));
        (c, steps)
    }

    #[test]
    fn renaming_a_run_is_the_run_on_the_renamed_pods() {
        let p = pods();
        let (first, first_steps) = run(&p);
        for perm in permutations::ALL {
            let g = renaming(perm);
            let (second, second_steps) = run(&p.clone().map(|pod| g.pod(&pod)));
            let renamed = first.renamed(&g);
            assert_eq!(renamed, second, "renaming by {perm:?}");
            renamed.check().unwrap();
            let steps: Vec<Step> = first_steps.iter().map(|s| s.renamed(&g)).collect();
            assert_eq!(steps, second_steps, "steps renamed by {perm:?}");
            if perm != [0, 1, 2] {
                assert_ne!(renamed, first, "{perm:?} moves the reservations");
            }
        }
    }

    #[test]
    fn a_renamed_pod_keeps_its_node_requests_and_phase() {
        let p = pods();
        let (state, _) = run(&p);
        let g = renaming([1, 2, 0]);
        let renamed = state.renamed(&g);
        for pod in &p {
            let image = g.id(pod.id());
            assert_eq!(renamed.pod_node(&image), state.pod_node(pod.id()));
            assert_eq!(renamed.pod_requests(&image), state.pod_requests(pod.id()));
            assert_eq!(renamed.phase(&image), state.phase(pod.id()));
        }
        let on_n1: Vec<PodId> = renamed.node("n1").unwrap().pods().cloned().collect();
        let want: Vec<PodId> = state.node("n1").unwrap().pods().cloned().collect();
        let mut want = want.renamed(&g);
        want.sort();
        assert_eq!(on_n1, want);
    }

    #[test]
    fn renaming_back_and_the_identity_give_the_original() {
        let (state, _) = run(&pods());
        permutations::assert_round_trips(&state, &pods());
        assert_eq!(
            CacheState::new().renamed(&renaming([2, 0, 1])),
            CacheState::new()
        );
    }

    /// The witnesses that the tests above can fail: renamings that forget the nodes' pod sets
    /// or the assumed index are told apart from the run on the renamed pods, and `check`
    /// rejects them.
    #[test]
    fn a_renaming_that_forgets_a_part_is_caught() {
        let p = pods();
        let (first, _) = run(&p);
        let g = renaming([1, 2, 0]);
        let (second, _) = run(&p.clone().map(|pod| g.pod(&pod)));

        let forgot_nodes = CacheState {
            nodes: first.nodes.clone(),
            ..first.renamed(&g)
        };
        assert_ne!(forgot_nodes, second);
        assert!(forgot_nodes.check().is_err());

        let forgot_assumed = CacheState {
            assumed: first.assumed.clone(),
            ..first.renamed(&g)
        };
        assert_ne!(forgot_assumed, second);
        assert!(forgot_assumed.check().is_err());

        assert_eq!(second.phase(p[0].id()), Some(PodPhase::Bound));
        assert_eq!(first.phase(p[0].id()), Some(PodPhase::Assumed));
    }
}
