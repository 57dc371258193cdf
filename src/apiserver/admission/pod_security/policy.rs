//! A namespace's Pod Security policy, read from its `pod-security.kubernetes.io/*` labels as
//! upstream's `PolicyToEvaluate` reads them: each mode's level and version, the defaults
//! (privileged, latest), warn following a stricter enforce, and the label errors.

use std::fmt;

use serde_json::{Map, Value};

use crate::apiserver::request::status::Cause;

const PREFIX: &str = "pod-security.kubernetes.io/";

/// The three Pod Security Standards, least strict first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    fn parse(s: &str) -> Option<Level> {
        match s {
            "privileged" => Some(Level::Privileged),
            "baseline" => Some(Level::Baseline),
            "restricted" => Some(Level::Restricted),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// `latest`, or the `v1.N` whose rules apply: the minor version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    Latest,
    Minor(u32),
}

impl Version {
    /// `latest` or `v1.N` with no leading zero (upstream's `^v1\.([0-9]|[1-9][0-9]*)$`).
    fn parse(s: &str) -> Option<Version> {
        if s == "latest" {
            return Some(Version::Latest);
        }
        let n = s.strip_prefix("v1.")?;
        let digits = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
        if !digits || (n.len() > 1 && n.starts_with('0')) {
            return None;
        }
        n.parse().ok().map(Version::Minor)
    }

    /// The minor version whose checks run: `latest`, and any version newer than the newest
    /// rules, run the newest.
    pub(crate) fn rules(self, newest: u32) -> u32 {
        match self {
            Version::Latest => newest,
            Version::Minor(m) => m.min(newest),
        }
    }
}

/// A mode's setting, printed as upstream prints it in every message: `restricted:latest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LevelVersion {
    pub(crate) level: Level,
    pub(crate) version: Version,
}

impl fmt::Display for LevelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.version {
            Version::Latest => write!(f, "{}:latest", self.level.name()),
            Version::Minor(m) => write!(f, "{}:v1.{m}", self.level.name()),
        }
    }
}

const DEFAULT: LevelVersion = LevelVersion {
    level: Level::Privileged,
    version: Version::Latest,
};

/// What a namespace asks of its pods in each mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Policy {
    pub(crate) enforce: LevelVersion,
    pub(crate) audit: LevelVersion,
    pub(crate) warn: LevelVersion,
}

impl Policy {
    /// Every mode privileged: nothing to evaluate.
    pub(crate) fn is_privileged(&self) -> bool {
        [self.enforce, self.audit, self.warn]
            .iter()
            .all(|m| m.level == Level::Privileged)
    }
}

/// The labels' policy and what is wrong with them, in upstream's order (enforce,
/// enforce-version, audit, audit-version, warn, warn-version). An unreadable enforce level
/// enforces restricted (closed); an unreadable audit or warn level is privileged; an
/// unreadable version is latest.
pub(crate) fn policy_of(labels: Option<&Map<String, Value>>) -> (Policy, Vec<Cause>) {
    let label = |mode: &str| {
        labels
            .and_then(|l| l.get(&format!("{PREFIX}{mode}")))
            .and_then(Value::as_str)
    };
    let mut errors = Vec::new();
    let mut mode = |mode: &str, unreadable: Level| -> (LevelVersion, bool) {
        let mut lv = DEFAULT;
        let level = label(mode);
        if let Some(v) = level {
            lv.level = Level::parse(v).unwrap_or_else(|| {
                errors.push(invalid(
                    mode,
                    v,
                    "must be one of privileged, baseline, restricted",
                ));
                unreadable
            });
        }
        let version_label = format!("{mode}-version");
        if let Some(v) = label(&version_label) {
            lv.version = Version::parse(v).unwrap_or_else(|| {
                errors.push(invalid(&version_label, v, "must be \"latest\" or \"v1.x\""));
                Version::Latest
            });
        }
        (lv, level.is_some_and(|v| Level::parse(v).is_some()))
    };
    let (enforce, enforce_valid) = mode("enforce", Level::Restricted);
    let (audit, _) = mode("audit", Level::Privileged);
    let (mut warn, _) = mode("warn", Level::Privileged);
    // A namespace that only enforces warns at the same level: a Deployment whose pods would be
    // refused says so when it is created.
    if label("warn").is_none() && enforce_valid && enforce.level > warn.level {
        warn.level = enforce.level;
        if label("warn-version").is_none() {
            warn.version = enforce.version;
        }
    }
    (
        Policy {
            enforce,
            audit,
            warn,
        },
        errors,
    )
}

fn invalid(mode: &str, value: &str, detail: &str) -> Cause {
    Cause::invalid(
        &format!("metadata.labels[{PREFIX}{mode}]"),
        &Value::String(value.to_string()),
        detail,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(labels: Value) -> (Policy, Vec<String>) {
        let (p, errs) = policy_of(labels.as_object());
        (p, errs.iter().map(Cause::rendered).collect())
    }

    #[test]
    fn no_labels_is_privileged_latest_everywhere() {
        let (p, errs) = of(json!({}));
        assert!(p.is_privileged() && errs.is_empty());
        assert_eq!(p.enforce.to_string(), "privileged:latest");
    }

    #[test]
    fn warn_follows_a_stricter_enforce_and_its_version() {
        let (p, _) = of(json!({
            "pod-security.kubernetes.io/enforce": "baseline",
            "pod-security.kubernetes.io/enforce-version": "v1.25"
        }));
        assert_eq!(p.warn.to_string(), "baseline:v1.25");
        assert_eq!(p.audit.to_string(), "privileged:latest");
        let (p, _) = of(json!({
            "pod-security.kubernetes.io/enforce": "baseline",
            "pod-security.kubernetes.io/warn": "restricted"
        }));
        assert_eq!(p.warn.to_string(), "restricted:latest");
    }

    #[test]
    fn unreadable_labels_fail_closed_for_enforce_only() {
        let (p, errs) = of(json!({
            "pod-security.kubernetes.io/enforce": "bogus",
            "pod-security.kubernetes.io/enforce-version": "v2",
            "pod-security.kubernetes.io/warn": "Restricted"
        }));
        assert_eq!(p.enforce.to_string(), "restricted:latest");
        assert_eq!(p.warn.level, Level::Privileged);
        assert_eq!(
            errs,
            [
                "metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"bogus\": must be one of privileged, baseline, restricted",
                "metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: \"v2\": must be \"latest\" or \"v1.x\"",
                "metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: \"Restricted\": must be one of privileged, baseline, restricted",
            ]
        );
    }

    #[test]
    fn versions_are_latest_or_v1_minor_without_leading_zeros() {
        for ok in ["latest", "v1.0", "v1.25", "v1.99"] {
            assert!(Version::parse(ok).is_some(), "{ok}");
        }
        for bad in ["v1.01", "1.25", "v1.25.0", "v2.0", "Latest", "v1.", "v1.-1"] {
            assert!(Version::parse(bad).is_none(), "{bad}");
        }
        assert_eq!(Version::Minor(40).rules(32), 32);
        assert_eq!(Version::Latest.rules(32), 32);
        assert_eq!(Version::Minor(25).rules(32), 25);
    }
}
