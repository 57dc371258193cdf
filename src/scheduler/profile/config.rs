//! `kubescheduler.config.k8s.io/v1` KubeSchedulerConfiguration → profiles, with upstream's
//! merge rules: custom multiPoint merged into the default multiPoint list (a re-enabled
//! default keeps its place, `disabled: [{name: "*"}]` drops them all), then each extension
//! point expanded from multiPoint, where a point's own explicit list overrides and orders first.

use serde_json::Value;

use super::args;
use super::{Profile, default_multipoint};
use crate::scheduler::plugins::{
    PluginArgs, Points, inter_pod_affinity, node_affinity, node_resources_balanced_allocation,
    node_resources_fit, pod_topology_spread, points,
};
use crate::scheduler::postfilter::DEFAULT_PREEMPTION;
use crate::scheduler::version::KubeVersion;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError(msg.into()))
}

/// One extension point's `enabled` (name, weight) and `disabled` names.
#[derive(Debug, Clone, Default)]
pub struct PluginSet {
    pub enabled: Vec<(String, i64)>,
    pub disabled: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct PointSets {
    pub multi_point: PluginSet,
    pub pre_filter: PluginSet,
    pub filter: PluginSet,
    pub post_filter: PluginSet,
    pub pre_score: PluginSet,
    pub score: PluginSet,
}

/// `mergePluginSet`: defaults minus disabled (all with "*"), custom re-enables replacing in
/// place, remaining custom ones appended.
fn merge(defaults: &[(String, i64)], custom: &PluginSet) -> Vec<(String, i64)> {
    let all_off = custom.disabled.iter().any(|d| d == "*");
    let mut used = vec![false; custom.enabled.len()];
    let mut out = Vec::new();
    if !all_off {
        for d in defaults {
            if custom.disabled.contains(&d.0) {
                continue;
            }
            match custom.enabled.iter().position(|c| c.0 == d.0) {
                Some(i) => {
                    used[i] = true;
                    out.push(custom.enabled[i].clone());
                }
                None => out.push(d.clone()),
            }
        }
    }
    for (i, c) in custom.enabled.iter().enumerate() {
        if !used[i] {
            out.push(c.clone());
        }
    }
    out
}

/// Expands multiPoint into one point: explicit overrides first (their order), then
/// multiPoint-only plugins, then other explicit ones.
fn expand_point(
    multi: &[(String, i64)],
    set: &PluginSet,
    implements: impl Fn(&Points) -> bool,
    point: &str,
) -> Result<Vec<(String, i64)>, ConfigError> {
    for (n, _) in &set.enabled {
        let p = points(n).ok_or_else(|| ConfigError(format!("unknown plugin {n:?}")))?;
        if !implements(&p) {
            return err(format!("plugin {n:?} does not extend {point} plugin"));
        }
    }
    let all_off = set.disabled.iter().any(|d| d == "*");
    let mut overrides = Vec::new();
    let mut from_multi = Vec::new();
    for (n, w) in multi {
        let p = points(n).ok_or_else(|| ConfigError(format!("unknown plugin {n:?}")))?;
        if !implements(&p) {
            continue;
        }
        if let Some(e) = set.enabled.iter().find(|e| e.0 == *n) {
            overrides.push(e.clone());
            continue;
        }
        if all_off || set.disabled.contains(n) {
            continue;
        }
        from_multi.push((n.clone(), *w));
    }
    let rest = set
        .enabled
        .iter()
        .filter(|e| !multi.iter().any(|m| m.0 == e.0))
        .cloned();
    Ok(overrides
        .into_iter()
        .chain(from_multi)
        .chain(rest)
        .collect())
}

/// Builds a profile from a (custom-merged or default) multiPoint list and per-point sets.
pub fn expand(
    name: &str,
    multi: &[(String, i64)],
    sets: &PointSets,
    percentage: Option<i64>,
    args: PluginArgs,
) -> Result<Profile, ConfigError> {
    let names = |v: Vec<(String, i64)>| v.into_iter().map(|(n, _)| n).collect::<Vec<_>>();
    let scores = expand_point(multi, &sets.score, |p| p.score, "score")?
        .into_iter()
        .map(|(n, w)| (n, if w == 0 { 1 } else { w }))
        .collect();
    Ok(Profile {
        scheduler_name: name.to_string(),
        pre_filters: names(expand_point(
            multi,
            &sets.pre_filter,
            |p| p.pre_filter,
            "preFilter",
        )?),
        filters: names(expand_point(multi, &sets.filter, |p| p.filter, "filter")?),
        post_filters: names(expand_point(
            multi,
            &sets.post_filter,
            |p| p.post_filter,
            "postFilter",
        )?),
        pre_scores: names(expand_point(
            multi,
            &sets.pre_score,
            |p| p.pre_score,
            "preScore",
        )?),
        scores,
        percentage_of_nodes_to_score: percentage,
        args,
    })
}

fn plugin_set(v: Option<&Value>, at: &str) -> Result<PluginSet, ConfigError> {
    let mut out = PluginSet::default();
    let Some(v) = v else { return Ok(out) };
    for (key, list) in [("enabled", &mut out.enabled)] {
        for (i, p) in v
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let name = p
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| ConfigError(format!("{at}.{key}: every entry needs a name")))?;
            if points(name).is_none() {
                return err(format!("{at}.{key}: unknown plugin {name:?}"));
            }
            let w = match p.get("weight") {
                None | Some(Value::Null) => 0,
                Some(v) => v.as_i64().filter(|w| i32::try_from(*w).is_ok()).ok_or_else(|| {
                    ConfigError(format!(
                        "{at}.{key}[{i}].weight: cannot unmarshal {} into Go struct field Plugin.weight of type int32",
                        args::json_kind(v)
                    ))
                })?,
            };
            list.push((name.to_string(), w));
        }
    }
    for p in v
        .get("disabled")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = p
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| ConfigError(format!("{at}.disabled: every entry needs a name")))?;
        if name != "*" && points(name).is_none() {
            return err(format!("{at}.disabled: unknown plugin {name:?}"));
        }
        out.disabled.push(name.to_string());
    }
    Ok(out)
}

fn plugin_args(list: Option<&Value>, at: &str) -> Result<PluginArgs, ConfigError> {
    let mut args = PluginArgs::default();
    let entries = match list {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => a.as_slice(),
        Some(_) => return err(format!("{at}.pluginConfig: expected a list")),
    };
    let mut seen: Vec<&str> = Vec::new();
    for (i, pc) in entries.iter().enumerate() {
        let at = format!("{at}.pluginConfig[{i}]");
        let name = pc
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| ConfigError(format!("{at}.name: Required value: a plugin name")))?;
        if seen.contains(&name) {
            return err(format!("{at}: Duplicate value: {name:?}"));
        }
        seen.push(name);
        let empty = Value::Object(Default::default());
        let a = pc.get("args").filter(|v| !v.is_null()).unwrap_or(&empty);
        let aat = format!("{at}.args");
        match name {
            node_resources_fit::NAME => args.fit = args::node_resources_fit(a, &aat)?,
            node_resources_balanced_allocation::NAME => {
                args.balanced = args::node_resources_balanced_allocation(a, &aat)?
            }
            pod_topology_spread::NAME => args.spread = args::pod_topology_spread(a, &aat)?,
            inter_pod_affinity::NAME => args.inter_pod = args::inter_pod_affinity(a, &aat)?,
            node_affinity::NAME => args.node_affinity = args::node_affinity(a, &aat)?,
            DEFAULT_PREEMPTION => args::default_preemption(a, &aat)?,
            // Plugins kexplore does not simulate (volumes, DRA) keep whatever args they carry.
            n if points(n).is_some() => {}
            n => return err(format!("{at}: unknown plugin {n:?}")),
        }
    }
    Ok(args)
}

/// One plugin's `args` (as in `pluginConfig`) over the defaults.
pub fn plugin_args_for(name: &str, args: &Value) -> Result<PluginArgs, ConfigError> {
    let list = serde_json::json!([{"name": name, "args": args}]);
    plugin_args(Some(&list), "args")
}

/// `percentageOfNodesToScore` (*int32) at `path` (its last segment is the key in `v`).
fn percentage(v: &Value, path: &str) -> Result<Option<i64>, ConfigError> {
    let key = path.rsplit('.').next().unwrap_or(path);
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => x
            .as_i64()
            .filter(|n| i32::try_from(*n).is_ok())
            .map(Some)
            .ok_or_else(|| {
                ConfigError(format!(
                    "{path}: cannot unmarshal {} into Go struct field percentageOfNodesToScore of type int32",
                    args::json_kind(x)
                ))
            }),
    }
}

/// Parses a KubeSchedulerConfiguration (YAML or JSON) into profiles for `version`.
pub fn load(text: &str, version: KubeVersion) -> Result<Vec<Profile>, ConfigError> {
    if version.is_legacy() {
        return err("a KubeSchedulerConfiguration (v1) needs --kube-version 1.25 or later");
    }
    let v: Value = serde_yaml::from_str(text).map_err(|e| ConfigError(format!("not YAML: {e}")))?;
    let api = v.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
    if api != "kubescheduler.config.k8s.io/v1" || kind != "KubeSchedulerConfiguration" {
        return err(format!(
            "expected apiVersion kubescheduler.config.k8s.io/v1, kind KubeSchedulerConfiguration; got {api:?} {kind:?}"
        ));
    }
    let global_pct = percentage(&v, "percentageOfNodesToScore")?;
    let profiles = v
        .get("profiles")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let profiles = if profiles.is_empty() {
        vec![Value::Object(Default::default())]
    } else {
        profiles
    };
    let mut out = Vec::new();
    for (i, p) in profiles.iter().enumerate() {
        let at = format!("profiles[{i}]");
        let name = match p.get("schedulerName") {
            None | Some(Value::Null) => crate::scheduler::DEFAULT_SCHEDULER,
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return err(format!(
                    "{at}.schedulerName: cannot unmarshal {} into Go struct field KubeSchedulerProfile.schedulerName of type string",
                    args::json_kind(other)
                ));
            }
        };
        let pl = p.get("plugins");
        let get = |k: &str| pl.and_then(|x| x.get(k));
        let sets = PointSets {
            multi_point: plugin_set(get("multiPoint"), &format!("{at}.plugins.multiPoint"))?,
            pre_filter: plugin_set(get("preFilter"), &format!("{at}.plugins.preFilter"))?,
            filter: plugin_set(get("filter"), &format!("{at}.plugins.filter"))?,
            post_filter: plugin_set(get("postFilter"), &format!("{at}.plugins.postFilter"))?,
            pre_score: plugin_set(get("preScore"), &format!("{at}.plugins.preScore"))?,
            score: plugin_set(get("score"), &format!("{at}.plugins.score"))?,
        };
        for (n, w) in &sets.score.enabled {
            if !(0..=100).contains(w) {
                return err(format!("{at}.plugins.score: weight of {n} must be 1..100"));
            }
        }
        let multi = merge(&default_multipoint(version), &sets.multi_point);
        let pct = percentage(p, &format!("{at}.percentageOfNodesToScore"))?.or(global_pct);
        if pct.is_some_and(|x| !(0..=100).contains(&x)) {
            return err(format!("{at}: percentageOfNodesToScore must be 0..100"));
        }
        let args = plugin_args(p.get("pluginConfig"), &at)?;
        out.push(expand(name, &multi, &sets, pct, args)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::plugins::node_resources_fit::ScoringStrategy;
    use crate::scheduler::version::NEWEST;

    #[test]
    fn disable_all_scores_and_reenable_one() {
        let cfg = r#"
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 30
profiles:
- schedulerName: bin-packer
  plugins:
    score:
      disabled: [{name: "*"}]
      enabled: [{name: NodeResourcesFit, weight: 5}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}]
"#;
        let p = &load(cfg, NEWEST).unwrap()[0];
        assert_eq!(p.scheduler_name, "bin-packer");
        assert_eq!(p.scores, vec![("NodeResourcesFit".to_string(), 5)]);
        assert_eq!(p.percentage_of_nodes_to_score, Some(30));
        assert_eq!(p.args.fit.strategy, ScoringStrategy::MostAllocated);
        assert!(p.filters.contains(&"NodeResourcesFit".to_string()));
    }

    #[test]
    fn unknown_plugin_is_an_error() {
        let cfg = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    filter:\n      enabled: [{name: Bogus}]\n";
        let e = load(cfg, NEWEST).unwrap_err();
        assert!(e.0.contains("unknown plugin \"Bogus\""), "{e}");
    }
}
