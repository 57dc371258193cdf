//! Presenter mode's predict-then-reveal: before the certificates, the handshake and the
//! filter are shown, the room is asked (which CA signed the client certificate? will the
//! handshake pass? which nodes pass the filter?), guesses with keys 1–9, then sees the answer
//! and whether it was right. Every answer is computed from what kexplore found — the signature
//! that verifies, the probe's handshake and requests, the scheduler's filter verdicts — never
//! written down in advance. ("Which node wins?" is view 5's own step: its reveal is the
//! scoring.)

use std::collections::BTreeMap;

use super::sched::model;
use super::state::AppState;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Question {
    Identity,
    Signer,
    Handshake,
    Filter,
}

impl Question {
    pub fn ask(self) -> &'static str {
        match self {
            Question::Identity => "Which user will the API server see you as?",
            Question::Signer => "Which CA signed the client certificate?",
            Question::Handshake => "Will the handshake pass?",
            Question::Filter => "Which nodes pass the filter?",
        }
    }
}

/// Where the question stands on screen: asked (guesses taken), or its answer shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Ask,
    Reveal,
}

/// A question on screen, with the choices it was asked with (kept, so a guess names what the
/// room saw even if the data changes under it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asking {
    pub question: Question,
    pub phase: Phase,
    pub choices: Vec<String>,
    /// Several choices may be right (keys toggle); else a key picks one.
    pub multi: bool,
    /// What the room needs to know to guess, without the answer.
    pub facts: Vec<String>,
}

/// The answer, once known: the right choices, the one fact said large, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub right: Vec<usize>,
    pub key_fact: String,
    pub lines: Vec<String>,
}

#[derive(Debug, Default)]
pub struct Quiz {
    pub asking: Option<Asking>,
    /// The room's picks per question (indices into its choices).
    pub guesses: BTreeMap<Question, Vec<usize>>,
}

impl Quiz {
    pub fn guess(&self, q: Question) -> &[usize] {
        self.guesses.get(&q).map_or(&[], Vec::as_slice)
    }

    /// Key `n` (1-based) while a question is asked: picks that choice, or toggles it.
    pub fn pick(&mut self, n: usize) -> bool {
        let Some(a) = self.asking.as_ref().filter(|a| a.phase == Phase::Ask) else {
            return false;
        };
        let Some(i) = n.checked_sub(1).filter(|i| *i < a.choices.len()) else {
            return false;
        };
        let g = self.guesses.entry(a.question).or_default();
        if !a.multi {
            *g = vec![i];
        } else if let Some(at) = g.iter().position(|x| *x == i) {
            g.remove(at);
        } else {
            g.push(i);
            g.sort_unstable();
        }
        true
    }
}

/// The question asked before `q`'s reveal, with its choices, or None when there is nothing to
/// ask about (no client certificate, no cluster loaded yet, a single node).
pub fn ask(state: &AppState, q: Question) -> Option<Asking> {
    let (choices, multi, facts) = match q {
        Question::Identity => {
            let ctx = state.active.as_ref()?;
            let r = ctx.report()?;
            let id = r.user.identity.as_ref()?;
            let entry = ctx.resolved.as_ref().ok().map(|f| f.user.clone());
            // The kubeconfig's user entry is the usual wrong answer: it is only a name in the file.
            let mut choices = Vec::new();
            // So is a group: O says what the user belongs to, not who it is.
            let group = id.groups.first().cloned();
            for c in [
                entry.clone(),
                Some(id.user.clone()),
                group,
                Some(ANONYMOUS.into()),
            ]
            .into_iter()
            .flatten()
            {
                if !choices.contains(&c) {
                    choices.push(c);
                }
            }
            choices.sort();
            let facts = vec![
                format!(
                    "context {}: user entry {}, which holds a client certificate",
                    ctx.name,
                    entry.as_deref().unwrap_or("?")
                ),
                "the API server never reads the kubeconfig: it sees only what we present".into(),
            ];
            (choices, false, facts)
        }
        Question::Signer => {
            let r = state.active.as_ref()?.report()?;
            let leaf = r.user.client_certificate.first()?;
            let mut choices: Vec<String> = Vec::new();
            for c in r.all_certificates().filter(|c| c.is_ca) {
                if !choices.iter().any(|x| x == c.name()) {
                    choices.push(c.name().to_string());
                }
            }
            choices.truncate(8);
            choices.push(NONE_OF_THESE.into());
            let facts = vec![
                format!("the client certificate: {}", leaf.subject),
                format!(
                    "it says it was issued by: {} — a name anyone can write",
                    leaf.issuer
                ),
                "only the CA's private key makes a signature its public key verifies".into(),
            ];
            (choices, false, facts)
        }
        Question::Handshake => {
            let ctx = state.active.as_ref()?;
            let server = ctx
                .resolved
                .as_ref()
                .ok()
                .map_or("?", |f| f.server.as_str())
                .to_string();
            let who = ctx
                .report()
                .and_then(|r| r.user.client_certificate.first())
                .map_or("no client certificate".to_string(), |c| c.subject.clone());
            let facts = vec![
                format!("server: {server}"),
                format!("we present: {who}"),
                "passes = TLS completes and the API server accepts who we are".into(),
            ];
            (vec!["passes".into(), "fails".into()], false, facts)
        }
        Question::Filter => {
            let m = state.sched.model()?;
            let mut names: Vec<String> = m.snapshot.nodes.iter().map(|n| n.name.clone()).collect();
            if names.len() < 2 {
                return None;
            }
            let total = names.len();
            names.truncate(9);
            let (cpu, memory) = m.pod_request();
            let mut facts = vec![format!(
                "pod {} requests cpu {}, memory {}",
                m.trace.pod,
                model::cpu_text(cpu),
                model::memory_text(memory)
            )];
            // What the plugins will read beyond the requests the view 5 bars showed.
            let tainted: Vec<String> = m
                .snapshot
                .nodes
                .iter()
                .filter(|n| !n.taints.is_empty())
                .take(3)
                .map(|n| {
                    let t: Vec<String> = n
                        .taints
                        .iter()
                        .map(|t| match &t.value {
                            Some(v) if !v.is_empty() => format!("{}={v}:{}", t.key, t.effect),
                            _ => format!("{}:{}", t.key, t.effect),
                        })
                        .collect();
                    format!("{} is tainted {}", n.name, t.join(", "))
                })
                .collect();
            facts.extend(tainted);
            let tolerates: Vec<String> = m
                .pod
                .tolerations
                .iter()
                .map(|t| {
                    format!(
                        "{}:{}",
                        t.key.as_deref().unwrap_or("*"),
                        t.effect.as_deref().unwrap_or("*")
                    )
                })
                .collect();
            facts.push(if tolerates.is_empty() {
                "the pod tolerates no taint".to_string()
            } else {
                format!("the pod tolerates {}", tolerates.join(", "))
            });
            if total > names.len() {
                facts.push(format!("the first 9 of {total} nodes"));
            }
            facts.push("pick every node you think passes (keys toggle)".into());
            (names, true, facts)
        }
    };
    Some(Asking {
        question: q,
        phase: Phase::Ask,
        choices,
        multi,
        facts,
    })
}

const NONE_OF_THESE: &str = "none of these";
const ANONYMOUS: &str = "system:anonymous";

/// `a`'s answer from what kexplore found, or None while it is still being found (the probe
/// running, the cluster loading).
pub fn answer(state: &AppState, a: &Asking) -> Option<Answer> {
    let index = |name: &str| a.choices.iter().position(|c| c == name);
    match a.question {
        Question::Identity => {
            let ctx = state.active.as_ref()?;
            let id = ctx.report()?.user.identity.as_ref()?;
            let entry = ctx.resolved.as_ref().ok().map(|f| f.user.as_str());
            // kubeadm names the entry after the CN: the room should not leave thinking the file
            // decided it.
            let label = match entry {
                Some(e) if e == id.user => format!(
                    "the kubeconfig's user entry is also called {e}, but only we read that name: the server reads the certificate"
                ),
                Some(e) => format!("the kubeconfig's user entry, {e}, is only a label for us"),
                None => "the kubeconfig's user entry's name is only a label for us".into(),
            };
            Some(Answer {
                right: index(&id.user).into_iter().collect(),
                key_fact: id.user.clone(),
                lines: vec![
                    format!(
                        "user = the certificate's CN ({}), groups = its O ({})",
                        id.user,
                        if id.groups.is_empty() {
                            "none".to_string()
                        } else {
                            id.groups.join(", ")
                        }
                    ),
                    label,
                ],
            })
        }
        Question::Signer => {
            let r = state.active.as_ref()?.report()?;
            let leaf = r.user.client_certificate.first()?;
            Some(match r.client_signer() {
                Some(ca) => Answer {
                    right: index(ca.name()).into_iter().collect(),
                    key_fact: ca.name().to_string(),
                    lines: vec![format!(
                        "its signature verifies with {}'s public key",
                        ca.name()
                    )],
                },
                None => Answer {
                    right: index(NONE_OF_THESE).into_iter().collect(),
                    key_fact: NONE_OF_THESE.into(),
                    lines: vec![format!(
                        "no CA in this kubeconfig verifies the signature; the issuer field says {} (a name, not a proof)",
                        leaf.issuer
                    )],
                },
            })
        }
        Question::Handshake => {
            if state.conn.running.is_some() {
                return None;
            }
            let report = state.conn.report.as_ref()?;
            let (passed, why) = handshake_verdict(report);
            Some(Answer {
                right: index(if passed { "passes" } else { "fails" })
                    .into_iter()
                    .collect(),
                key_fact: if passed { "passes" } else { "fails" }.into(),
                lines: vec![why],
            })
        }
        Question::Filter => {
            let m = state.sched.model()?;
            let passing: Vec<&str> = m
                .trace
                .filter
                .iter()
                .filter(|v| v.passed)
                .map(|v| v.node.as_ref())
                .collect();
            let right = a
                .choices
                .iter()
                .enumerate()
                .filter(|(_, c)| passing.contains(&c.as_str()))
                .map(|(i, _)| i)
                .collect();
            let mut lines = vec![if passing.is_empty() {
                "no node passes: the pod stays Pending".to_string()
            } else {
                format!("passing: {}", passing.join(", "))
            }];
            if !m.trace.skipped_by_sampling.is_empty() {
                lines.push(format!(
                    "{} node(s) never evaluated: the scheduler stopped after enough feasible ones",
                    m.trace.skipped_by_sampling.len()
                ));
            }
            Some(Answer {
                right,
                key_fact: format!("{} of {} pass", passing.len(), m.snapshot.nodes.len()),
                lines,
            })
        }
    }
}

/// Whether the connection counts as passing, as the lesson's handshake question does: TLS
/// completed and the API server did not refuse the identity (`GET /api` below 400).
fn handshake_verdict(r: &super::connection::probe::ConnectionReport) -> (bool, String) {
    let hs = match &r.handshake {
        Err(e) => return (false, format!("no handshake: {e}")),
        Ok(hs) => hs,
    };
    if let Some(f) = &hs.failure {
        return (
            false,
            format!("failed at {}: {}", f.step.label(), f.message),
        );
    }
    let api = r.requests.iter().find(|s| s.path == "/api");
    match api.map(|s| &s.result) {
        Some(Ok(resp)) if resp.status < 400 => (
            true,
            format!(
                "TLS completed ({}) and GET /api answered {}",
                hs.tls_version.as_deref().unwrap_or("?"),
                resp.status
            ),
        ),
        Some(Ok(resp)) => (
            false,
            format!(
                "TLS completed, but the API server answered {} to GET /api",
                resp.status
            ),
        ),
        Some(Err(e)) => (false, format!("TLS completed, but GET /api failed: {e}")),
        None => (false, "TLS completed, but no request was made".into()),
    }
}

/// "✓ right" / "✗ …" for the room's guess, or None when nobody guessed.
pub fn verdict(a: &Asking, answer: &Answer, guess: &[usize]) -> Option<String> {
    if guess.is_empty() {
        return None;
    }
    let named: Vec<&str> = guess
        .iter()
        .filter_map(|i| a.choices.get(*i).map(String::as_str))
        .collect();
    let right = guess == answer.right.as_slice();
    Some(format!(
        "your guess, {}: {}",
        named.join(", "),
        if right {
            "✓ right"
        } else {
            "✗ not this time"
        }
    ))
}
