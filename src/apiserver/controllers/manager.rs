//! kube-controller-manager: the one list of the controllers it runs, each loop on a thread of
//! its own, while this replica holds the kube-controller-manager Lease. Adding a controller is
//! its file and one line here.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::apiserver::controllers::{
    certificates, clusterrole_aggregation, cronjob, disruption, job, ttl_after_finished,
};
use crate::apiserver::controllers::{daemonset, deployment, replicaset, statefulset};
use crate::apiserver::controllers::{endpoints, endpointslice, resourcequota};
use crate::apiserver::controllers::{
    garbage_collector, namespace, root_ca_cert_publisher, serviceaccount,
};
use crate::apiserver::controllers::{
    node_lifecycle, persistentvolume, podautoscaler, provisioner, volume_protection, workload,
};
use crate::apiserver::request::context::Api;

pub(crate) async fn run(
    api: Arc<Api>,
    stop: watch::Receiver<bool>,
    node_monitor_grace: Duration,
    hpa_sync_period: Duration,
) {
    let mut loops = JoinSet::new();
    // Node health, taints and NoExecute evictions.
    loops.spawn(on_own_thread(node_lifecycle::run(
        api.clone(),
        node_monitor_grace,
        stop.clone(),
    )));
    macro_rules! control {
        ($c:expr) => {
            loops.spawn(on_own_thread(workload::run(api.clone(), stop.clone(), $c)))
        };
    }
    control!(deployment::Deployments);
    control!(replicaset::ReplicaSetController::replica_sets());
    control!(replicaset::ReplicaSetController::replication_manager());
    control!(daemonset::DaemonSets);
    control!(statefulset::StatefulSets);
    control!(job::Jobs::default());
    control!(cronjob::CronJobs::default());
    control!(ttl_after_finished::TtlAfterFinished);
    control!(disruption::Disruption);
    control!(podautoscaler::HorizontalController::new(hpa_sync_period));
    control!(certificates::CsrSigner);
    control!(endpointslice::EndpointSlices);
    control!(endpoints::EndpointsController);
    control!(resourcequota::ResourceQuotas);
    control!(persistentvolume::PersistentVolumes::default());
    // The demo cluster's provisioner, an add-on upstream (kind's local-path-provisioner).
    control!(provisioner::Provisioner);
    control!(volume_protection::PvcProtection::default());
    control!(volume_protection::PvProtection);
    control!(namespace::Namespaces);
    control!(serviceaccount::ServiceAccounts);
    control!(root_ca_cert_publisher::RootCaCertPublisher);
    control!(clusterrole_aggregation::ClusterRoleAggregation);
    loops.spawn(on_own_thread(garbage_collector::run(
        api.clone(),
        stop.clone(),
    )));
    while loops.join_next().await.is_some() {}
}

/// Runs a control loop on a thread of its own. A scheduling pass over hundreds of pending pods
/// is seconds of CPU without an await; on one of the server's two workers it held every task
/// queued there — a watch woken by a write waited behind it for tens of seconds while the
/// other worker, never idle under load, did not steal it. kube-scheduler, the kubelets and
/// kube-controller-manager are other processes upstream; here they are other threads.
pub(crate) async fn on_own_thread(control_loop: impl Future<Output = ()> + Send + 'static) {
    let _ = tokio::task::spawn_blocking(move || {
        // Timers only: the loops do no I/O, so their runtimes hold no epoll or eventfd.
        match tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
        {
            Ok(rt) => rt.block_on(control_loop),
            Err(e) => eprintln!("kexplore serve: cannot start a control loop: {e}"),
        }
    })
    .await;
}
