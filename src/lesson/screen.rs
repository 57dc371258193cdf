//! What one lesson step puts on screen, as plain data: the facts the room may see before the
//! reveal (never the answer: the journey's node, the scores), then the reveal itself.

use serde_json::{Value, json};

use super::run::{Answer, Session};
use super::{Reveal, Step};
use crate::journey::Stage;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Screen {
    /// "step 3 of 12".
    pub progress: String,
    /// The view and stage, in large text.
    pub title: String,
    pub caption: String,
    /// What the action did.
    pub done: Option<String>,
    /// Facts that do not give the answer away.
    pub facts: Vec<String>,
    pub question: Option<String>,
    pub choices: Vec<String>,
    /// After the reveal: its one key fact (the answer), shown large in place of the title.
    pub key_fact: Option<String>,
    /// After the reveal: the answer's lines, and whether the guess (if any) was right.
    pub reveal: Option<Vec<String>>,
    /// The step's action is still running: no key is taken yet.
    pub busy: bool,
}

/// The facts shown with a step before its reveal. `hide` is the reveal still to come: the
/// facts leave out whatever it would answer.
pub fn facts(session: &Session, step: &Step, hide: Option<Reveal>) -> Vec<String> {
    let mut out = Vec::new();
    let stage = step.stage;
    match step.view {
        super::LessonView::Kubeconfig | super::LessonView::Certificates => {
            let u = &session.user;
            out.push(format!(
                "context {} · server {}",
                u.context_name, u.cluster.server
            ));
            if let Some(r) = session.report() {
                if let Some(c) = r.user.client_certificate.first() {
                    if hide != Some(Reveal::Identity) {
                        out.push(format!("client certificate subject: {}", c.subject));
                    }
                    out.push(format!("valid {} → {}", c.not_before, c.not_after));
                    if !c.extended_key_usage.is_empty() {
                        out.push(format!("usage: {}", c.extended_key_usage.join(", ")));
                    }
                }
                for ca in &r.cluster.certificate_authority {
                    out.push(format!("CA in the kubeconfig: {}", ca.subject));
                }
            }
        }
        super::LessonView::Connection => {
            out.push(format!("server {}", session.user.cluster.server));
            out.push(
                "the client offers its certificate; the server checks it against its CA".into(),
            );
        }
        super::LessonView::Journey | super::LessonView::Scheduler => {
            // A node's taint or cordon leaves the last pod as it was; its journey, from an
            // earlier step, would read as this step's doing.
            let this_steps = matches!(step.action, None | Some(super::Action::Create(_)));
            if let Some(j) = session.journey.as_ref().filter(|_| this_steps) {
                out.push(format!("pod {}", j.pod));
                // The stages up to the one the step is about; watch and binding carry the
                // node, so they wait until the winner is revealed.
                let upto = stage.unwrap_or(Stage::Response);
                for s in &j.stages {
                    if s.stage > upto && stage.is_some() {
                        break;
                    }
                    if hides_node(s.stage, hide) {
                        continue;
                    }
                    let ok = match s.status {
                        crate::stage::Status::Ok => "✓",
                        crate::stage::Status::Failed => "✗",
                        crate::stage::Status::Skipped => "·",
                    };
                    out.push(format!("{ok} {}", s.stage.title()));
                }
                if hide == Some(Reveal::Winner) {
                    // The filter's result is known by now; the scores are the answer.
                    let passed: Vec<String> = stage_detail(session, Stage::Filter)["filter"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|f| f["passed"] == json!(true))
                        .filter_map(|f| f["node"].as_str().map(String::from))
                        .collect();
                    out.push(format!("passed the filter: {}", passed.join(", ")));
                }
            }
            // The workloads created so far, side by side; the one a question is about keeps
            // its placement until the reveal.
            let asked = step
                .question
                .as_ref()
                .filter(|q| q.reveal == Reveal::NodesUsed && hide.is_some())
                .and_then(|q| q.of.as_deref());
            for w in &session.workloads {
                let pods: usize = w.per_node.values().sum();
                if asked == Some(w.name.as_str()) {
                    out.push(format!(
                        "{} {} ({}): {pods} pod(s); where they run is the question",
                        w.kind, w.name, w.scheduler
                    ));
                } else {
                    out.push(format!(
                        "{} {} ({}): {}",
                        w.kind,
                        w.name,
                        w.scheduler,
                        w.placement()
                    ));
                }
            }
        }
    }
    out
}

/// Whether stage `s` would answer the reveal still to come: watch, score, binding and kubelet
/// name the node; the filter's own ✓/✗ says whether any node passed (and so whether it runs);
/// admission's, whether the pod got in.
fn hides_node(s: Stage, hide: Option<Reveal>) -> bool {
    match hide {
        Some(Reveal::Winner) => {
            matches!(
                s,
                Stage::Watch | Stage::Score | Stage::Binding | Stage::Kubelet
            )
        }
        Some(Reveal::Feasible | Reveal::Phase) => matches!(
            s,
            Stage::Watch | Stage::Filter | Stage::Score | Stage::Binding | Stage::Kubelet
        ),
        // Admission's ✓/✗ is the answer, and every stage after it says whether it got in.
        Some(Reveal::Admission) => s >= Stage::Admission,
        _ => false,
    }
}

fn stage_detail(session: &Session, s: Stage) -> Value {
    session
        .journey
        .as_ref()
        .and_then(|j| j.stages.iter().find(|x| x.stage == s))
        .map(|x| x.detail.clone())
        .unwrap_or(Value::Null)
}

/// The reveal's lines: the guess judged (when there was one) and the answer's explanation.
pub fn reveal(answer: &Answer, choices: &[String], guess: Option<usize>) -> Vec<String> {
    let right: Vec<usize> = choices
        .iter()
        .enumerate()
        .filter(|(_, c)| answer.matches(c))
        .map(|(i, _)| i)
        .collect();
    let mut out = Vec::new();
    match guess {
        Some(g) if right.contains(&g) => out.push(format!("✓ {} — right", choices[g])),
        Some(g) => out.push(format!(
            "✗ {} — not this time",
            choices.get(g).map_or("?", String::as_str)
        )),
        None => {}
    }
    match right.first() {
        Some(r) => out.push(format!("answer: {} {}", r + 1, choices[*r])),
        None => out.push(format!(
            "answer: {} (none of the choices)",
            if answer.values.is_empty() {
                "none".to_string()
            } else {
                answer.values.join(", ")
            }
        )),
    }
    out.extend(answer.lines.iter().cloned());
    out
}

/// The reveal's one key fact: the choice that is right, else the computed answer itself.
pub fn key_fact(answer: &Answer, choices: &[String]) -> Option<String> {
    choices
        .iter()
        .find(|c| answer.matches(c))
        .cloned()
        .or_else(|| (!answer.values.is_empty()).then(|| answer.values.join(", ")))
}
