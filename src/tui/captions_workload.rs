//! Presenter mode's captions for a workload's journey (a Deployment, ReplicaSet, DaemonSet or
//! StatefulSet): its own request, the controllers that act on it, then its pods. The pod's
//! captions would be false here — no pod is sent, and the steps after the response are
//! controllers, not the scheduler.

use crate::journey::run::WriteMode;
use crate::stage::Stage;

/// `stage`: the workload stage on screen (`None`: the request at step 0, or the pod list when
/// `pods` is set); `kind` is the manifest's (`Deployment`), `plural` its resource.
pub fn caption(
    stage: Option<Stage>,
    pods: bool,
    (kind, plural): (&str, &str),
    write: WriteMode,
) -> String {
    let dry = write == WriteMode::DryRun;
    if pods {
        return if dry {
            format!("A dry run stored no {kind}, so no controller saw it and no pod was made.")
        } else {
            "Its pods: each one took a pod's own journey — the scheduler chose its node, that node's kubelet started it.".into()
        };
    }
    let Some(stage) = stage else {
        return format!(
            "A {kind} is a JSON document too, created with one HTTPS POST. It describes pods; it is not one."
        );
    };
    match stage {
        Stage::TlsHandshake => {
            "The request rides on the mutual-TLS connection we just watched being built.".into()
        }
        Stage::Authentication => {
            "Authentication: who is asking? For a certificate, the CN and O fields answer.".into()
        }
        Stage::Authorization => format!(
            "Authorization: may this user create {plural} here? RBAC rules decide, or a privileged group skips them."
        ),
        Stage::Admission => {
            format!("Admission: plugins may fill in or change the {kind} before it is stored.")
        }
        Stage::Validation => format!(
            "Validation: the {kind} must be well formed, its pod template included. A mistake would stop it here with 422."
        ),
        Stage::Storage if dry => {
            "Storage: a dry run stops here. Every check ran, but nothing was stored.".into()
        }
        Stage::Storage => format!(
            "Storage: the API server writes the {kind} under its key. Nothing runs yet."
        ),
        Stage::Response if dry => format!(
            "The answer to a dry run: the {kind} as it would have been stored. No controller will see it."
        ),
        Stage::Response => format!(
            "201 Created: the {kind} exists, but no pod does. Controllers, watching {plural}, make them."
        ),
        Stage::DeploymentController => {
            "The Deployment controller sees the new Deployment and creates a ReplicaSet for its pod template.".into()
        }
        Stage::ReplicasetController => {
            "The ReplicaSet controller creates pods from the template until there are as many as replicas.".into()
        }
        Stage::DaemonsetController => {
            "The DaemonSet controller creates one pod for each node that should run it, with node affinity for that node.".into()
        }
        Stage::StatefulsetController => {
            "The StatefulSet controller creates pods with stable names (-0, -1, …): by default one at a time, each once the one before is Running and Ready.".into()
        }
        other => format!("{}.", other.title()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workload_is_never_captioned_as_a_pod_or_the_scheduler() {
        let d = ("Deployment", "deployments");
        let real = WriteMode::ForReal;
        let stages = [
            None,
            Some(Stage::TlsHandshake),
            Some(Stage::Authorization),
            Some(Stage::Admission),
            Some(Stage::Validation),
            Some(Stage::Storage),
            Some(Stage::Response),
            Some(Stage::DeploymentController),
            Some(Stage::ReplicasetController),
        ];
        for s in stages {
            let c = caption(s, false, d, real);
            assert!(!c.contains("Score") && !c.contains("Filter"), "{s:?}: {c}");
            assert!(!c.contains("the pod "), "{s:?}: {c}");
        }
        assert!(caption(None, false, d, real).starts_with("A Deployment is a JSON document"));
        assert!(caption(Some(Stage::Authorization), false, d, real).contains("create deployments"));
        assert!(caption(None, true, d, real).contains("the scheduler chose its node"));
        assert!(caption(None, true, d, WriteMode::DryRun).contains("no pod was made"));
    }
}
