//! Control loops inside the embedded cluster (upstream kube-scheduler, kubelet and the bootstrap
//! controller): the scheduler loop and its placement engines, simulated kubelets, events.

pub mod bootstrap;
pub mod events;
pub mod kubelet;
pub mod placement;
pub mod scheduler_loop;
