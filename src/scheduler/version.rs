//! Which kube-scheduler release is modelled, and every behaviour that depends on it
//! (spec §11). One method per delta, so a reader finds each switch by name.

use std::fmt;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct KubeVersion {
    pub major: u32,
    pub minor: u32,
}

/// The newest release the spec covers; the default.
pub const NEWEST: KubeVersion = KubeVersion {
    major: 1,
    minor: 37,
};

/// The oldest framework-era release modelled (0–100 scores, multiPoint-less profiles work too).
const OLDEST_FRAMEWORK: u32 = 25;
/// The newest modelled; master's (~v1.38) tie-break is a heap with random keys, equally uniform.
const NEWEST_ACCEPTED: u32 = 38;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--kube-version {0:?}: not a modelled release; use 1.13 (legacy predicates/priorities) or 1.{OLDEST_FRAMEWORK}..1.{NEWEST_ACCEPTED}"
)]
pub struct VersionError(pub String);

impl KubeVersion {
    pub fn parse(s: &str) -> Result<KubeVersion, VersionError> {
        let bad = || VersionError(s.to_string());
        let t = s.trim().trim_start_matches('v');
        let mut parts = t.split('.');
        let major: u32 = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        let minor: u32 = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        // A patch number is accepted and ignored ("1.34.2").
        if let Some(p) = parts.next() {
            p.parse::<u32>().map_err(|_| bad())?;
        }
        if parts.next().is_some() || major != 1 {
            return Err(bad());
        }
        let ok = minor == 13 || (OLDEST_FRAMEWORK..=NEWEST_ACCEPTED).contains(&minor);
        if !ok {
            return Err(bad());
        }
        Ok(KubeVersion { major, minor })
    }

    /// The modelled release nearest to `1.<minor>`: itself when modelled, else the closest of
    /// v1.13 and v1.25..=v1.38 (an older release gets the oldest model, a newer one the newest).
    pub fn nearest_modelled(minor: u32) -> KubeVersion {
        let minor = match minor {
            m if m <= 13 => 13,
            m if m < OLDEST_FRAMEWORK => {
                if m - 13 < OLDEST_FRAMEWORK - m {
                    13
                } else {
                    OLDEST_FRAMEWORK
                }
            }
            m => m.min(NEWEST_ACCEPTED),
        };
        KubeVersion { major: 1, minor }
    }

    /// v1.11–v1.13: predicates and 0–10 priorities (spec §8).
    pub fn is_legacy(self) -> bool {
        self.minor <= 13
    }

    /// v1.35 (and v1.34 patch back-ports): the fixed "untolerated taint(s)" text (#134740).
    pub fn generic_taint_reason(self) -> bool {
        self.minor >= 35
    }

    /// v1.34: NodeResourcesFit is UnschedulableAndUnresolvable when a request exceeds the
    /// node's allocatable outright (#131345).
    pub fn fit_unresolvable_above_allocatable(self) -> bool {
        self.minor >= 34
    }

    /// v1.34: DynamicResources (DRA GA) in the default profile; its PostFilter message leads
    /// the FitError suffix.
    pub fn dynamic_resources_in_profile(self) -> bool {
        self.minor >= 34
    }

    /// v1.34: PodLevelResources beta, on by default.
    pub fn pod_level_resources(self) -> bool {
        self.minor >= 34
    }

    /// v1.36: BalancedAllocation scores the change in balance, with vs without the pod (#135573).
    pub fn balanced_with_and_without_pod(self) -> bool {
        self.minor >= 36
    }

    /// v1.33: BalancedAllocation's PreScore skips best-effort pods (#130260, fixing #129138).
    pub fn balanced_skips_best_effort(self) -> bool {
        self.minor >= 33
    }

    /// ≤ v1.30: in-tree EBSLimits/GCEPDLimits/AzureDiskLimits in the default profile.
    pub fn in_tree_volume_limits(self) -> bool {
        self.minor <= 30
    }

    /// The node-sampling default: 50% fixed in v1.12–v1.13, adaptive (0) later.
    pub fn default_percentage_of_nodes_to_score(self) -> i64 {
        if self.is_legacy() { 50 } else { 0 }
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}", self.major, self.minor)
    }
}

impl Default for KubeVersion {
    fn default() -> Self {
        NEWEST
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert_eq!(KubeVersion::parse("1.34").unwrap().minor, 34);
        assert_eq!(KubeVersion::parse("v1.35.2").unwrap().minor, 35);
        assert!(KubeVersion::parse("1.13").unwrap().is_legacy());
        for bad in ["1.20", "2.1", "x", "1", "1.99"] {
            assert!(KubeVersion::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn nearest_modelled_release() {
        let n = |m| KubeVersion::nearest_modelled(m).minor;
        assert_eq!([n(9), n(13), n(18), n(19), n(24)], [13, 13, 13, 25, 25]);
        assert_eq!([n(25), n(31), n(38), n(40)], [25, 31, 38, 38]);
    }
}
