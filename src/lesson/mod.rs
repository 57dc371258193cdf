//! Lessons: a YAML file of steps an instructor walks a room through. Each step has a caption,
//! the view (and stage) it is about, an optional action on the embedded cluster, and an optional
//! question whose answer is never written in the file: `reveal` names what to compute from what
//! the cluster actually did (the node the scheduler bound, the handshake's verdict...).
//! `load` parses and validates; errors name the file, line and field.

pub mod run;
pub mod screen;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::stage::Stage;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    pub title: String,
    /// A KubeSchedulerConfiguration (relative to the lesson's file) for the embedded
    /// cluster's kube-scheduler: its profiles, each placing the pods that name it.
    #[serde(default)]
    pub scheduler_config: Option<String>,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// What the room reads, written for someone who has never seen a certificate.
    pub caption: String,
    /// Which of kexplore's five views the step is about.
    pub view: LessonView,
    /// The stage of the journey the step is about (its title, in large text).
    #[serde(default)]
    pub stage: Option<Stage>,
    /// Done on the embedded cluster when the step starts.
    #[serde(default)]
    pub action: Option<Action>,
    #[serde(default)]
    pub question: Option<Question>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LessonView {
    Kubeconfig,
    Certificates,
    Connection,
    Journey,
    Scheduler,
}

impl LessonView {
    pub fn title(self) -> &'static str {
        match self {
            LessonView::Kubeconfig => "1 Kubeconfig",
            LessonView::Certificates => "2 Certificates",
            LessonView::Connection => "3 Connection",
            LessonView::Journey => "4 Pod journey",
            LessonView::Scheduler => "5 Scheduler",
        }
    }
}

/// Something done to the cluster (or to the client) when a step starts. Written as a map with
/// one key (`cordon: node-1`), read through `ActionSpec`.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "ActionSpec")]
pub enum Action {
    /// Create a pod from a manifest (relative to the lesson's file; `app.json` is the seed's
    /// pod) and follow it to a node, replacing a pod of the same name; or a workload (a
    /// Deployment…), followed until its pods run.
    Create(Create),
    /// Delete a pod (`namespace/name`, or `name` in default).
    Delete(String),
    Cordon(String),
    Uncordon(String),
    Taint(Taint),
    /// Remove the taint with this key from the node.
    Untaint(NodeKey),
    Label(NodeLabel),
    Unlabel(NodeKey),
    /// Create a namespace with these labels, or set them on it when it exists
    /// (`namespace: {name: secure, labels: {pod-security.kubernetes.io/enforce: restricted}}`).
    Namespace(NamespaceLabels),
    /// Talk to the server as this kubeconfig's user from now on: `expired-client`,
    /// `foreign-ca` or `no-client-auth` (minted from the embedded cluster's own CA, so only
    /// the named flaw differs), or `valid` to go back.
    Kubeconfig(Credential),
}

/// An action as written: exactly one of these keys.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct ActionSpec {
    create: Option<Create>,
    delete: Option<String>,
    cordon: Option<String>,
    uncordon: Option<String>,
    taint: Option<Taint>,
    untaint: Option<NodeKey>,
    label: Option<NodeLabel>,
    unlabel: Option<NodeKey>,
    namespace: Option<NamespaceLabels>,
    kubeconfig: Option<Credential>,
}

impl TryFrom<ActionSpec> for Action {
    type Error = String;
    fn try_from(a: ActionSpec) -> Result<Action, String> {
        let all = [
            a.create.map(Action::Create),
            a.delete.map(Action::Delete),
            a.cordon.map(Action::Cordon),
            a.uncordon.map(Action::Uncordon),
            a.taint.map(Action::Taint),
            a.untaint.map(Action::Untaint),
            a.label.map(Action::Label),
            a.unlabel.map(Action::Unlabel),
            a.namespace.map(Action::Namespace),
            a.kubeconfig.map(Action::Kubeconfig),
        ];
        let mut set = all.into_iter().flatten();
        match (set.next(), set.next()) {
            (Some(one), None) => Ok(one),
            (None, _) => Err("an action needs one of create, delete, cordon, uncordon, taint, untaint, label, unlabel, namespace, kubeconfig".into()),
            (Some(_), Some(_)) => Err("one action per step".into()),
        }
    }
}

impl Action {
    /// What the action is doing, said while it runs (a create waits for its pod's fate).
    pub fn doing(&self) -> String {
        match self {
            Action::Create(c) => format!(
                "sending {} to the API server and following it to its fate…",
                c.manifest
            ),
            Action::Delete(p) => format!("deleting pod {p}…"),
            Action::Cordon(n) => format!("cordoning node {n}…"),
            Action::Uncordon(n) => format!("uncordoning node {n}…"),
            Action::Taint(t) => format!("tainting node {}…", t.node),
            Action::Untaint(k) => format!("removing taint {} from node {}…", k.key, k.node),
            Action::Label(l) => format!("labelling node {} {}={}…", l.node, l.key, l.value),
            Action::Unlabel(k) => format!("removing label {} from node {}…", k.key, k.node),
            Action::Namespace(ns) => format!("setting up namespace {}…", ns.name),
            Action::Kubeconfig(_) => "switching the client's credentials…".into(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Create {
    pub manifest: String,
    /// Override the first container's requests (a Kubernetes quantity: `500m`, `3`, `2Gi`).
    #[serde(default)]
    pub cpu: Option<String>,
    #[serde(default)]
    pub memory: Option<String>,
    /// Override the pod's name.
    #[serde(default)]
    pub name: Option<String>,
}

impl Create {
    /// Where the pod came from, with what the lesson changed of it: `app.json`, or
    /// `app.json, requests cpu 7` (the name shows in the pod's own name).
    pub fn source(&self) -> String {
        let set: Vec<String> = [("cpu", &self.cpu), ("memory", &self.memory)]
            .into_iter()
            .filter_map(|(what, v)| v.as_ref().map(|v| format!("{what} {v}")))
            .collect();
        if set.is_empty() {
            return self.manifest.clone();
        }
        format!("{}, requests {}", self.manifest, set.join(", "))
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamespaceLabels {
    pub name: String,
    #[serde(default)]
    pub labels: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Taint {
    pub node: String,
    pub key: String,
    #[serde(default)]
    pub value: Option<String>,
    pub effect: TaintEffect,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

impl TaintEffect {
    pub fn as_str(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeKey {
    pub node: String,
    pub key: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeLabel {
    pub node: String,
    pub key: String,
    pub value: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Credential {
    Valid,
    ExpiredClient,
    ForeignCa,
    NoClientAuth,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    pub ask: String,
    pub choices: Choices,
    /// What the answer is computed from.
    pub reveal: Reveal,
    /// The workload (created by an earlier step) a `nodes-used` reveal is about.
    #[serde(default)]
    pub of: Option<String>,
}

/// Up to nine choices (keys 1–9), or `nodes`: the cluster's node names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choices {
    Nodes,
    List(Vec<String>),
}

impl<'de> Deserialize<'de> for Choices {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Word(String),
            List(Vec<String>),
        }
        match Raw::deserialize(d)? {
            Raw::Word(w) if w == "nodes" => Ok(Choices::Nodes),
            Raw::Word(w) => Err(serde::de::Error::custom(format!(
                "expected `nodes` or a list of 2 to 9 choices, found {w:?}"
            ))),
            Raw::List(l) if (2..=9).contains(&l.len()) => Ok(Choices::List(l)),
            Raw::List(l) => Err(serde::de::Error::custom(format!(
                "a question takes 2 to 9 choices (keys 1-9), found {}",
                l.len()
            ))),
        }
    }
}

/// What a question's answer is computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reveal {
    /// The user the server takes the client to be (the certificate's CN).
    Identity,
    /// The CA that signed the client certificate, verified by its signature.
    Signer,
    /// Whether the TLS handshake (and the server's acceptance of the client) passes.
    Handshake,
    /// Which nodes pass the filter (a choice is a comma-separated set, or `none`).
    Feasible,
    /// The node the scheduler picks, with every node's score.
    Winner,
    /// The pod's phase at the end (Running, Pending), with the scheduler's reason.
    Phase,
    /// How many nodes the pods of workload `of` run on, with the pods of each node.
    NodesUsed,
    /// Whether the API server let the pod in (`admitted`, `refused`): the admission plugin
    /// or validation that refused it and why, or what the validating plugins said.
    Admission,
}

impl Reveal {
    /// Whether the answer comes from a pod the lesson created.
    pub fn needs_pod(self) -> bool {
        matches!(
            self,
            Reveal::Feasible
                | Reveal::Winner
                | Reveal::Phase
                | Reveal::NodesUsed
                | Reveal::Admission
        )
    }
}

/// A lesson that could not be loaded: the file, the line when known, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LessonError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for LessonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// Reads and validates a lesson file.
pub fn load(path: &Path) -> Result<Lesson, LessonError> {
    let text = std::fs::read_to_string(path).map_err(|e| LessonError {
        file: path.to_path_buf(),
        line: None,
        message: e.to_string(),
    })?;
    parse(path, &text)
}

/// Parses `text` (from `path`, for messages): serde_yaml's path and location, then the checks
/// that span steps.
pub fn parse(path: &Path, text: &str) -> Result<Lesson, LessonError> {
    let err = |line: Option<usize>, message: String| LessonError {
        file: path.to_path_buf(),
        line,
        message,
    };
    let lesson: Lesson = serde_yaml::from_str(text).map_err(|e| {
        if let Some(kind) = manifest_kind(text) {
            return err(
                line_of(text, "kind:", 0),
                format!(
                    "this is a Kubernetes manifest (kind {kind}), not a lesson: a lesson has `title` and `steps` (see lessons/*.yaml); `kexplore journey -f FILE` follows a manifest"
                ),
            );
        }
        let line = e.location().map(|l| l.line());
        // serde_yaml ends its message with "at line L column C"; the line leads ours instead.
        let msg = e.to_string();
        let msg = match msg.rfind(" at line ") {
            Some(i) => msg[..i].to_string(),
            None => msg,
        };
        err(line, msg)
    })?;
    if lesson.steps.is_empty() {
        return Err(err(
            line_of(text, "steps:", 0),
            "steps: a lesson needs at least one step".into(),
        ));
    }
    let mut created = false;
    let mut questions = 0;
    for (i, s) in lesson.steps.iter().enumerate() {
        created |= matches!(s.action, Some(Action::Create(_)));
        if let Some(q) = &s.question {
            if q.reveal.needs_pod() && !created {
                return Err(err(
                    line_of(text, "reveal:", questions),
                    format!(
                        "steps[{i}].question.reveal: {:?} needs a pod, and no step up to this one creates one (action: create)",
                        q.reveal
                    )
                    .to_lowercase(),
                ));
            }
            if q.reveal == Reveal::NodesUsed && q.of.is_none() {
                return Err(err(
                    line_of(text, "reveal:", questions),
                    format!(
                        "steps[{i}].question.of: nodes-used needs `of: NAME`, a workload an earlier step creates"
                    ),
                ));
            }
            questions += 1;
        }
    }
    Ok(lesson)
}

/// The kind of a Kubernetes manifest given where a lesson goes (the lessons' own pods sit
/// beside them), so the error says what the file is rather than which lesson field
/// `apiVersion` is not.
fn manifest_kind(text: &str) -> Option<String> {
    let serde_yaml::Value::Mapping(m) = serde_yaml::from_str(text).ok()? else {
        return None;
    };
    if !m.contains_key("apiVersion") || m.contains_key("steps") {
        return None;
    }
    m.get("kind")?.as_str().map(str::to_string)
}

/// The 1-based line of the `nth` line whose text starts (after indentation) with `key`.
fn line_of(text: &str, key: &str, nth: usize) -> Option<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().trim_start_matches("- ").starts_with(key))
        .nth(nth)
        .map(|(i, _)| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> Result<Lesson, LessonError> {
        parse(Path::new("l.yaml"), s)
    }

    /// The screen says what the lesson sent: the file, and the requests it changed.
    #[test]
    fn a_create_says_what_it_changed_of_the_manifest() {
        let c = |cpu: Option<&str>, memory: Option<&str>| Create {
            manifest: "app.json".into(),
            cpu: cpu.map(String::from),
            memory: memory.map(String::from),
            name: Some("big".into()),
        };
        assert_eq!(c(None, None).source(), "app.json");
        assert_eq!(c(Some("7"), None).source(), "app.json, requests cpu 7");
        assert_eq!(
            c(Some("1.5"), Some("2Gi")).source(),
            "app.json, requests cpu 1.5, memory 2Gi"
        );
    }

    #[test]
    fn a_misspelt_field_names_its_line_and_path() {
        let e = parse_str(
            "title: t\nsteps:\n  - caption: c\n    view: scheduler\n    action:\n      cordn: node-1\n",
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(
            e.starts_with("l.yaml:6: steps[0].action: unknown field `cordn`"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_stage_or_view_is_refused_with_its_line() {
        let e = parse_str("title: t\nsteps:\n  - caption: c\n    view: schedule\n")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.starts_with("l.yaml:4: steps[0].view: unknown variant `schedule`"),
            "{e}"
        );
        let e = parse_str(
            "title: t\nsteps:\n  - caption: c\n    view: journey\n    stage: filtering\n",
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(
            e.starts_with("l.yaml:5: steps[0].stage: unknown variant `filtering`"),
            "{e}"
        );
    }

    #[test]
    fn a_question_about_a_pod_needs_a_create_before_it() {
        let e = parse_str(
            "title: t\nsteps:\n  - caption: c\n    view: scheduler\n    question:\n      ask: a\n      choices: nodes\n      reveal: winner\n",
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(
            e.starts_with("l.yaml:8: steps[0].question.reveal: winner needs a pod"),
            "{e}"
        );
    }

    #[test]
    fn nodes_used_names_its_workload() {
        let text = "title: t\nsteps:\n  - caption: c\n    view: scheduler\n    action:\n      create: {manifest: workloads/web-spread.yaml}\n    question:\n      ask: a\n      choices: [\"1\", \"2\"]\n      reveal: nodes-used\n";
        let e = parse_str(text).expect_err("refused");
        assert_eq!(e.line, Some(10), "{e}");
        assert!(e.message.contains("question.of"), "{e}");
        let ok = format!("{text}      of: web-spread\n");
        let l = parse_str(&ok).expect("parses");
        let q = l.steps[0].question.as_ref().expect("question");
        assert_eq!(
            (q.reveal, q.of.as_deref()),
            (Reveal::NodesUsed, Some("web-spread"))
        );
    }

    #[test]
    fn too_many_choices_are_refused() {
        let list: Vec<String> = (0..10).map(|i| format!("\"c{i}\"")).collect();
        let text = format!(
            "title: t\nsteps:\n  - caption: c\n    view: connection\n    question:\n      ask: a\n      choices: [{}]\n      reveal: handshake\n",
            list.join(", ")
        );
        let e = parse_str(&text)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("2 to 9 choices"), "{e}");
        // serde_yaml places a custom error at the enclosing map: the question.
        assert!(e.starts_with("l.yaml:6: steps[0].question:"), "{e}");
    }

    #[test]
    fn a_manifest_given_as_a_lesson_is_named_for_what_it_is() {
        let e = parse_str("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("l.yaml:2: this is a Kubernetes manifest (kind Pod), not a lesson"),
            "{e}"
        );
    }
}
