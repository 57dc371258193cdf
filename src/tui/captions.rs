//! Presenter mode's captions: one or two plain sentences per step saying the concept the
//! audience is looking at (what the seeds say matters), not what is on the screen.

use super::connection::ladder::Rung;
use super::sched::steps::Step;
use crate::journey::STAGES;
use crate::journey::run::WriteMode;
use crate::stage::Stage;

pub fn connection(rung: Option<&Rung>) -> String {
    let Some(r) = rung else {
        return "The client is about to open a connection to the API server.".into();
    };
    if r.failure.is_some() {
        return "The connection stops here. Everything after this step never happened — the fix is on screen.".into();
    }
    match r.title.as_str() {
        "TCP connect" => "First a plain TCP connection to the API server's address: nothing is secret or verified yet.",
        "ClientHello" => "The client says which TLS versions and ciphers it speaks, and, for a server with a DNS name, which name it wants.",
        "ServerHello" => "The server picks the version and cipher. From here the handshake is encrypted.",
        "Certificate (server)" => "The server shows its certificate. The client trusts it only because a CA in the kubeconfig signed it: a diploma, trusted for its school.",
        "CertificateRequest" => "Now the server asks the client to prove who it is, naming the CAs it trusts for clients.",
        "Certificate" => "The client sends its own certificate. Its CN becomes the user name and its O fields the groups.",
        "Finished" => "Both sides proved they hold their private keys and agree on the keys. The channel is secure.",
        "GET /version" => "The first real request: which Kubernetes release is this?",
        "GET /api" => "The seed's curl request: the core API group answers with the versions it serves.",
        _ => "Who does the server think we are? It answers from the certificate alone — no password was ever sent.",
    }
    .into()
}

/// `write` is how the run on screen writes: a dry run stores nothing, so from storage on the
/// captions say what did not happen instead of what a real create does. `ended` is the first
/// stage that failed: from there on, what a create usually does did not happen.
pub fn journey(step: usize, write: WriteMode, ended: Option<Stage>) -> String {
    let here = step.checked_sub(1).and_then(|i| STAGES.get(i)).copied();
    if let (Some(s), Some(f)) = (here, ended)
        && let Some(c) = after_a_failure(s, f)
    {
        return c;
    }
    usual(step, write).into()
}

/// The caption of stage `s` in a journey that failed at `f`; None before `f`, where the usual
/// words hold.
fn after_a_failure(s: Stage, f: Stage) -> Option<String> {
    if s < f {
        return None;
    }
    Some(match (s == f, f) {
        (true, Stage::TlsHandshake) => {
            "The connection failed, so the request was never sent. View 3 shows why and how to fix it.".into()
        }
        (true, Stage::Filter) => {
            "Filter: no node can run the pod. It stays Pending; the scheduler tries again when the cluster changes.".into()
        }
        (true, f) if f >= Stage::Watch => format!(
            "{}: the pod was stored, but it stops here. The reason is on screen.",
            f.title()
        ),
        (true, f) => format!(
            "{}: this is where the API server refused the pod. The reason is on screen.",
            f.title()
        ),
        (false, f) if s == Stage::Response && f < Stage::Response && f != Stage::TlsHandshake => {
            "The answer: an error Status with its code and reason, which kubectl prints. Nothing was created.".into()
        }
        (false, f) => format!(
            "This never happened: the journey ended at {}.",
            f.title()
        ),
    })
}

fn usual(step: usize, write: WriteMode) -> &'static str {
    if write == WriteMode::DryRun {
        match step {
            6 => {
                return "Storage: a dry run stops here. Every check ran, but nothing was stored.";
            }
            7 => {
                return "The answer to a dry run: the pod as it would have been stored. It does not exist.";
            }
            8 => {
                return "Watches: the scheduler and the kubelets learn about pods by watching — this one was never stored, so they never hear of it.";
            }
            9 | 10 => {
                return "The scheduler never saw this pod: kexplore simulates its filter and score on the cluster's nodes.";
            }
            11 => {
                return "Binding: nothing was stored, so nothing was bound. W creates the pod for real (it asks first).";
            }
            12.. => return "No kubelet runs a dry-run pod: nothing was stored, nothing starts.",
            _ => {}
        }
    }
    match step {
        0 => "A pod is only a JSON document. Creating it is one HTTPS POST to the API server.",
        1 => "The request rides on the mutual-TLS connection we just watched being built.",
        2 => "Authentication: who is asking? For a certificate, the CN and O fields answer.",
        3 => {
            "Authorization: may this user create pods here? RBAC rules decide, or a privileged group skips them."
        }
        4 => {
            "Admission: after the defaults set while decoding, each plugin may fill in or change the pod before it is stored — here is what each changed."
        }
        5 => "Validation: the pod must be well formed. A mistake would stop it here with 422.",
        6 => {
            "Storage: the API server writes the pod under its key (in etcd, on a real cluster); the write gives it a resourceVersion."
        }
        7 => "201 Created: the client gets its answer now. The pod exists but runs nowhere yet.",
        8 => {
            "Watches: the scheduler and the kubelets learn about the pod by watching, not by being called."
        }
        9 => "Filter: the scheduler removes every node the pod cannot run on.",
        10 => "Score: the remaining nodes are ranked; the highest total wins.",
        11 => {
            "Binding: the scheduler only writes the node's name into the pod. It starts nothing itself."
        }
        _ => {
            "The kubelet on that node sees the binding, pulls the image unless the node has it, and starts the container: Running."
        }
    }
}

/// `placed`: whether the cycle on screen found a node (the last step says what happens then);
/// `scored`: whether more than one node was left to score (one is chosen without scoring).
pub fn scheduler(step: Option<&Step>, placed: bool, scored: bool) -> &'static str {
    match step {
        Some(Step::Nodes) => {
            "Every node has capacity; the pods on it already claim part of it. The pod asks for its share."
        }
        Some(Step::Filter(_)) => {
            "Filter: each plugin may rule a node out. A node stops at the first plugin that says no."
        }
        Some(Step::Predict) => "Before the scores: which node do you think wins, and why?",
        Some(Step::Score(_)) => {
            "Score: each plugin gives every remaining node 0-100, times its weight. The totals grow plugin by plugin."
        }
        Some(Step::Result) if placed && !scored => {
            "Only one node passed every filter: kube-scheduler takes it without scoring and binds the pod to it."
        }
        Some(Step::Result) if placed => {
            "The highest total wins; ties are broken at random. The scheduler then binds the pod to it."
        }
        Some(Step::Result) => {
            "No node passed every filter: the pod stays Pending, and the scheduler tries again when the cluster changes."
        }
        None => "The scheduler decides in two phases: rule nodes out, then rank what is left.",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_feasible_node_is_not_said_to_win_on_its_total() {
        let one = scheduler(Some(&Step::Result), true, false);
        assert!(one.contains("without scoring"), "{one}");
        assert!(!one.contains("highest total"), "{one}");
        let many = scheduler(Some(&Step::Result), true, true);
        assert!(many.starts_with("The highest total wins"), "{many}");
    }

    #[test]
    fn a_journey_that_failed_is_told_from_where_it_ended() {
        // Steps count from the request (0): stage i is step i + 1.
        let step = |s: Stage| STAGES.iter().position(|x| *x == s).expect("a stage") + 1;
        let real = WriteMode::ForReal;
        let no_tls = Some(Stage::TlsHandshake);
        assert!(journey(step(Stage::TlsHandshake), real, no_tls).contains("never sent"));
        assert_eq!(
            journey(step(Stage::Response), real, no_tls),
            "This never happened: the journey ended at TLS handshake."
        );
        let pending = Some(Stage::Filter);
        assert!(journey(step(Stage::Storage), real, pending).contains("writes the pod"));
        assert!(journey(step(Stage::Filter), real, pending).contains("stays Pending"));
        assert_eq!(
            journey(step(Stage::Score), real, pending),
            "This never happened: the journey ended at Filter."
        );
        let pull = Some(Stage::Kubelet);
        assert_eq!(
            journey(step(Stage::Kubelet), real, pull),
            "Kubelet: the pod was stored, but it stops here. The reason is on screen."
        );
        // A dry run refused by authorization is not "every check ran".
        let denied = Some(Stage::Authorization);
        assert_eq!(
            journey(step(Stage::Storage), WriteMode::DryRun, denied),
            "This never happened: the journey ended at Authorization."
        );
    }
}
