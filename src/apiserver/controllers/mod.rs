//! Control loops inside the embedded cluster (upstream kube-scheduler, kubelet and the bootstrap
//! controller): the scheduler loop and its placement engines, simulated kubelets, events.

pub mod bootstrap;
pub(crate) mod client;
pub(crate) mod cronjob;
pub(crate) mod daemonset;
pub(crate) mod deployment;
pub(crate) mod disruption;
pub(crate) mod endpoints;
pub(crate) mod endpointslice;
pub(crate) mod events;
pub(crate) mod garbage_collector;
pub(crate) mod history;
pub(crate) mod job;
pub(crate) mod kubelet;
pub(crate) mod kubelet_completion;
pub(crate) mod kubelet_containers;
pub(crate) mod kubelet_images;
pub(crate) mod kubelet_ipam;
pub(crate) mod kubelet_node;
pub(crate) mod kubelet_refs;
pub(crate) mod kubelet_report;
pub(crate) mod leader_election;
pub(crate) mod manager;
pub(crate) mod namespace;
pub(crate) mod node_lifecycle;
pub(crate) mod placement;
pub(crate) mod preemption;
pub(crate) mod replicaset;
pub(crate) mod resourcequota;
pub(crate) mod root_ca_cert_publisher;
pub(crate) mod scheduler_cache;
pub(crate) mod scheduler_loop;
pub(crate) mod serviceaccount;
pub(crate) mod statefulset;
pub(crate) mod taint_eviction;
pub(crate) mod workload;
