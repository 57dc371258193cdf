//! Which kinds have a strategy of their own, and finding a kind's: the one list every
//! kind-specific step reads (Tables, field selectors, OpenAPI, typed decoding, create, update).

use k8s_openapi::schemars::SchemaGenerator;
use serde_json::Value;

use crate::apiserver::registry::strategy::{Strategy, TypedResult};
use crate::apiserver::registry::{
    apiextensions, apps, authn, autoscaling, batch, certificates, coordination, core,
    discovery_k8s_io, networking, node, policy, rbac, scheduling, storage,
};

/// Every kind with a strategy of its own; kinds not listed are plain stored objects.
static STRATEGIES: &[&dyn Strategy] = &[
    &core::pod::Pod,
    &core::node::Node,
    &core::namespace::Namespace,
    &core::binding::Binding,
    &core::componentstatus::ComponentStatus,
    &core::event::Event,
    &core::event::EventsV1Event,
    &core::serviceaccount::ServiceAccount,
    &core::configmap::ConfigMap,
    &core::secret::Secret,
    &core::service::Service,
    &core::endpoints::Endpoints,
    &core::persistentvolume::PersistentVolume,
    &core::persistentvolumeclaim::PersistentVolumeClaim,
    &core::limitrange::LimitRange,
    &core::resourcequota::ResourceQuota,
    &core::replicationcontroller::ReplicationController,
    &discovery_k8s_io::endpointslice::EndpointSlice,
    &apps::deployment::Deployment,
    &apps::replicaset::ReplicaSet,
    &apps::daemonset::DaemonSet,
    &apps::statefulset::StatefulSet,
    &apps::controllerrevision::ControllerRevision,
    &batch::job::Job,
    &batch::cronjob::CronJob,
    &autoscaling::horizontalpodautoscaler::HorizontalPodAutoscaler,
    &certificates::certificatesigningrequest::CertificateSigningRequest,
    &networking::ingress::Ingress,
    &networking::ingressclass::IngressClass,
    &networking::networkpolicy::NetworkPolicy,
    &policy::poddisruptionbudget::PodDisruptionBudget,
    &scheduling::priorityclass::PriorityClass,
    &node::runtimeclass::RuntimeClass,
    &storage::storageclass::StorageClass,
    &coordination::lease::Lease,
    &rbac::role::ClusterRole,
    &rbac::binding::ClusterRoleBinding,
    &rbac::role::Role,
    &rbac::binding::RoleBinding,
    &authn::SelfSubjectReview,
    &authn::SelfSubjectAccessReview,
    &authn::SubjectAccessReview,
    &authn::LocalSubjectAccessReview,
    &authn::SelfSubjectRulesReview,
    &authn::TokenReview,
    &authn::TokenRequest,
    &apiextensions::CustomResourceDefinition,
];

/// A kind without a strategy of its own: a plain stored object, printed by upstream's default
/// table convertor.
pub(crate) struct Default;

impl Strategy for Default {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        ""
    }
    fn schemas(&self, _generator: &mut SchemaGenerator) {}
    fn typed(&self, v: &Value) -> TypedResult {
        Ok(v.clone())
    }
}

/// The strategy of a kind, if it has one of its own.
pub(crate) fn of(group: &str, kind: &str) -> Option<&'static dyn Strategy> {
    STRATEGIES
        .iter()
        .copied()
        .find(|s| s.group() == group && s.kind() == kind)
}

/// The strategy of a kind by its name alone, for paths that carry only the kind (Tables, field
/// selectors): every kind with a strategy has a name no other served group uses.
pub(crate) fn of_kind(kind: &str) -> Option<&'static dyn Strategy> {
    STRATEGIES.iter().copied().find(|s| s.kind() == kind)
}
