//! `pluginConfig[].args` → the plugins' typed arguments, as kube-scheduler reads them: every
//! field decoded with its upstream type (a string where an integer belongs is an error naming
//! the field, never a silent 0), unknown fields refused (its decoder is strict), upstream's
//! defaults applied (`SetDefaults_*Args`), then upstream's validation (`Validate*Args`) with its
//! messages, as `field.Error` prints them: "<path>: Invalid value: <value>: <detail>".

use serde_json::{Map, Value};

use super::config::ConfigError;
use crate::scheduler::plugins::inter_pod_affinity::InterPodAffinityArgs;
use crate::scheduler::plugins::node_affinity::NodeAffinityArgs;
use crate::scheduler::plugins::node_resources_fit::{FitArgs, ScoringStrategy};
use crate::scheduler::plugins::pod_topology_spread::SpreadArgs;
use crate::scheduler::plugins::resource_allocation::{ResourceSpec, default_resources};
use crate::scheduler::selector::{NodeSelectorTerms, NodeTerm, is_qualified_name};

/// `MaxCustomPriorityScore`: the top of a RequestedToCapacityRatio shape.
const MAX_CUSTOM_PRIORITY_SCORE: i64 = 10;

/// One args object being read: its path, for every message, and the fields it may have.
struct Obj<'a> {
    map: &'a Map<String, Value>,
    at: String,
    /// Upstream's Go type, for the decoder's words ("InterPodAffinityArgs").
    go_type: &'static str,
}

/// Go's name for a JSON value's kind in "cannot unmarshal <kind> into ...".
pub(super) fn json_kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "bool".into(),
        Value::Number(n) => format!("number {n}"),
        Value::String(_) => "string".into(),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
    }
}

impl<'a> Obj<'a> {
    fn new(v: &'a Value, at: String, go_type: &'static str) -> Result<Obj<'a>, ConfigError> {
        match v {
            Value::Object(map) => Ok(Obj { map, at, go_type }),
            other => Err(ConfigError(format!(
                "{at}: cannot unmarshal {} into Go value of type {go_type}",
                json_kind(other)
            ))),
        }
    }

    fn path(&self, key: &str) -> String {
        format!("{}.{key}", self.at)
    }

    /// Refuses any field but `known` (and the TypeMeta every args object may carry).
    fn only(&self, known: &[&str]) -> Result<(), ConfigError> {
        for k in self.map.keys() {
            if !known.contains(&k.as_str()) && k != "apiVersion" && k != "kind" {
                return Err(ConfigError(format!(
                    "strict decoding error: unknown field \"{}\"",
                    self.path(k)
                )));
            }
        }
        Ok(())
    }

    fn wrong(&self, key: &str, v: &Value, go: &str) -> ConfigError {
        ConfigError(format!(
            "{}: cannot unmarshal {} into Go struct field {}.{key} of type {go}",
            self.path(key),
            json_kind(v),
            self.go_type
        ))
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn int(&self, key: &str, go: &str, lo: i64, hi: i64) -> Result<Option<i64>, ConfigError> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        match v.as_i64() {
            Some(n) if (lo..=hi).contains(&n) => Ok(Some(n)),
            _ => Err(self.wrong(key, v, go)),
        }
    }

    fn int32(&self, key: &str) -> Result<Option<i64>, ConfigError> {
        self.int(key, "int32", i32::MIN.into(), i32::MAX.into())
    }

    fn int64(&self, key: &str) -> Result<Option<i64>, ConfigError> {
        self.int(key, "int64", i64::MIN, i64::MAX)
    }

    fn bool(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.wrong(key, v, "bool")),
        }
    }

    fn string(&self, key: &str, go: &str) -> Result<Option<String>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.wrong(key, v, go)),
        }
    }

    fn list(&self, key: &str, go: &str) -> Result<Vec<&'a Value>, ConfigError> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => Ok(a.iter().collect()),
            Some(v) => Err(self.wrong(key, v, go)),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, ConfigError> {
        let mut out = Vec::new();
        for (i, v) in self.list(key, "[]string")?.into_iter().enumerate() {
            match v {
                Value::String(s) => out.push(s.clone()),
                other => {
                    return Err(ConfigError(format!(
                        "{}[{i}]: cannot unmarshal {} into Go struct field {}.{key} of type string",
                        self.path(key),
                        json_kind(other),
                        self.go_type
                    )));
                }
            }
        }
        Ok(out)
    }
}

/// Validation errors of one args object, printed as `field.ErrorList.ToAggregate()` prints.
#[derive(Default)]
struct Errors(Vec<String>);

impl Errors {
    fn invalid(&mut self, path: String, value: impl std::fmt::Display, detail: &str) {
        self.0
            .push(format!("{path}: Invalid value: {value}: {detail}"));
    }

    fn into_result(self) -> Result<(), ConfigError> {
        match self.0.len() {
            0 => Ok(()),
            1 => Err(ConfigError(self.0.concat())),
            _ => Err(ConfigError(format!("[{}]", self.0.join(", ")))),
        }
    }
}

fn quoted(s: &str) -> String {
    format!("{s:?}")
}

/// `ValidateLabelName`'s verdict on one name.
fn label_name(errs: &mut Errors, path: String, name: &str) {
    if !is_qualified_name(name) {
        errs.invalid(
            path,
            quoted(name),
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        );
    }
}

/// `[]ResourceSpec` with `SetDefaults`' weight 0 → 1; `validateResources` is the caller's.
fn resource_specs(list: Vec<&Value>, at: &str) -> Result<Vec<ResourceSpec>, ConfigError> {
    let mut out = Vec::new();
    for (i, r) in list.into_iter().enumerate() {
        let o = Obj::new(r, format!("{at}[{i}]"), "ResourceSpec")?;
        o.only(&["name", "weight"])?;
        out.push(ResourceSpec {
            name: o.string("name", "string")?.unwrap_or_default(),
            weight: match o.int64("weight")? {
                None | Some(0) => 1,
                Some(w) => w,
            },
        });
    }
    Ok(out)
}

/// `NodeResourcesFitArgs`.
pub fn node_resources_fit(v: &Value, at: &str) -> Result<FitArgs, ConfigError> {
    let o = Obj::new(v, at.to_string(), "NodeResourcesFitArgs")?;
    o.only(&[
        "ignoredResources",
        "ignoredResourceGroups",
        "scoringStrategy",
    ])?;
    let mut args = FitArgs {
        ignored_resources: o.strings("ignoredResources")?,
        ignored_resource_groups: o.strings("ignoredResourceGroups")?,
        ..FitArgs::default()
    };
    let mut errs = Errors::default();
    for (i, r) in args.ignored_resources.iter().enumerate() {
        label_name(&mut errs, format!("{at}.ignoredResources[{i}]"), r);
    }
    for (i, g) in args.ignored_resource_groups.iter().enumerate() {
        let path = format!("{at}.ignoredResourceGroups[{i}]");
        if g.contains('/') {
            errs.invalid(
                path.clone(),
                quoted(g),
                "resource group name can't contain '/'",
            );
        }
        label_name(&mut errs, path, g);
    }
    if let Some(s) = o.get("scoringStrategy") {
        let sp = format!("{at}.scoringStrategy");
        let so = Obj::new(s, sp.clone(), "ScoringStrategy")?;
        so.only(&["type", "resources", "requestedToCapacityRatio"])?;
        let kind = so
            .string("type", "v1.ScoringStrategyType")?
            .unwrap_or_default();
        args.resources = resource_specs(
            so.list("resources", "[]v1.ResourceSpec")?,
            &format!("{sp}.resources"),
        )?;
        if args.resources.is_empty() {
            args.resources = default_resources();
        }
        for (i, r) in args.resources.iter().enumerate() {
            if !(1..=100).contains(&r.weight) {
                errs.invalid(
                    format!("{sp}.resources[{i}].weight"),
                    r.weight,
                    &format!("resource weight of {} not in valid range (0, 100]", r.name),
                );
            }
        }
        let shape = match so.get("requestedToCapacityRatio") {
            Some(r) => {
                let ro = Obj::new(
                    r,
                    format!("{sp}.requestedToCapacityRatio"),
                    "RequestedToCapacityRatioParam",
                )?;
                ro.only(&["shape"])?;
                Some(shape(&ro, &format!("{sp}.shape"), &mut errs)?)
            }
            None => None,
        };
        args.strategy = match kind.as_str() {
            "LeastAllocated" => ScoringStrategy::LeastAllocated,
            "MostAllocated" => ScoringStrategy::MostAllocated,
            "RequestedToCapacityRatio" => {
                let points = shape.unwrap_or_default();
                if points.is_empty() {
                    errs.0.push(format!(
                        "{sp}.shape: Required value: at least one point must be specified"
                    ));
                }
                ScoringStrategy::RequestedToCapacityRatio(points)
            }
            other => {
                errs.0.push(format!(
                    "{sp}.type: Unsupported value: {}: supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"",
                    quoted(other)
                ));
                ScoringStrategy::LeastAllocated
            }
        };
    }
    errs.into_result()?;
    Ok(args)
}

/// A RequestedToCapacityRatio shape, checked as `validateFunctionShape` does (kept in the
/// order given: upstream requires it sorted rather than sorting it).
fn shape(o: &Obj, at: &str, errs: &mut Errors) -> Result<Vec<(i64, i64)>, ConfigError> {
    let mut points = Vec::new();
    for (i, p) in o
        .list("shape", "[]v1.UtilizationShapePoint")?
        .into_iter()
        .enumerate()
    {
        let po = Obj::new(p, format!("{at}[{i}]"), "UtilizationShapePoint")?;
        po.only(&["utilization", "score"])?;
        points.push((
            po.int32("utilization")?.unwrap_or(0),
            po.int32("score")?.unwrap_or(0),
        ));
    }
    if points.is_empty() {
        return Ok(points);
    }
    if let Some(i) = (1..points.len()).find(|&i| points[i - 1].0 >= points[i].0) {
        errs.invalid(
            format!("{at}[{i}].utilization"),
            points[i].0,
            "values must be sorted in increasing order",
        );
    }
    for (i, (u, s)) in points.iter().enumerate() {
        if !(0..=100).contains(u) {
            errs.invalid(
                format!("{at}[{i}].utilization"),
                u,
                "not in valid range [0, 100]",
            );
        }
        if !(0..=MAX_CUSTOM_PRIORITY_SCORE).contains(s) {
            errs.invalid(
                format!("{at}[{i}].score"),
                s,
                &format!("not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"),
            );
        }
    }
    Ok(points)
}

/// `NodeResourcesBalancedAllocationArgs`: no resources means cpu and memory.
pub fn node_resources_balanced_allocation(
    v: &Value,
    at: &str,
) -> Result<Option<Vec<ResourceSpec>>, ConfigError> {
    let o = Obj::new(v, at.to_string(), "NodeResourcesBalancedAllocationArgs")?;
    o.only(&["resources"])?;
    let rs = resource_specs(
        o.list("resources", "[]v1.ResourceSpec")?,
        &format!("{at}.resources"),
    )?;
    let mut errs = Errors::default();
    for (i, r) in rs.iter().enumerate() {
        if rs[..i].iter().any(|p| p.name == r.name) {
            errs.0.push(format!(
                "{at}.resources[{i}].name: Duplicate value: {}",
                quoted(&r.name)
            ));
        }
        if r.weight != 1 {
            errs.invalid(format!("{at}.resources[{i}].weight"), r.weight, "must be 1");
        }
    }
    errs.into_result()?;
    Ok((!rs.is_empty()).then_some(rs))
}

/// `PodTopologySpreadArgs`.
pub fn pod_topology_spread(v: &Value, at: &str) -> Result<SpreadArgs, ConfigError> {
    let o = Obj::new(v, at.to_string(), "PodTopologySpreadArgs")?;
    o.only(&["defaultConstraints", "defaultingType"])?;
    let defaulting = o
        .string(
            "defaultingType",
            "v1.PodTopologySpreadConstraintsDefaulting",
        )?
        .unwrap_or_else(|| "System".into());
    let mut constraints = Vec::new();
    for (i, c) in o
        .list("defaultConstraints", "[]v1.TopologySpreadConstraint")?
        .into_iter()
        .enumerate()
    {
        let c: k8s_openapi::api::core::v1::TopologySpreadConstraint =
            serde_json::from_value(c.clone())
                .map_err(|e| ConfigError(format!("{at}.defaultConstraints[{i}]: {e}")))?;
        constraints.push(c);
    }
    let mut errs = Errors::default();
    let dp = format!("{at}.defaultingType");
    match defaulting.as_str() {
        "System" if !constraints.is_empty() => errs.invalid(
            dp,
            quoted(&defaulting),
            "when .defaultConstraints are not empty",
        ),
        "System" | "List" => {}
        other => errs.0.push(format!(
            "{dp}: Unsupported value: {}: supported values: \"System\", \"List\"",
            quoted(other)
        )),
    }
    let cp = format!("{at}.defaultConstraints");
    for (i, c) in constraints.iter().enumerate() {
        if c.max_skew <= 0 {
            errs.invalid(
                format!("{cp}[{i}].maxSkew"),
                c.max_skew,
                "not in valid range (0, inf)",
            );
        }
        if c.topology_key.is_empty() {
            errs.0.push(format!(
                "{cp}[{i}].topologyKey: Required value: can not be empty"
            ));
        } else {
            label_name(&mut errs, format!("{cp}[{i}].topologyKey"), &c.topology_key);
        }
        match c.when_unsatisfiable.as_str() {
            "" => errs.0.push(format!(
                "{cp}[{i}].whenUnsatisfiable: Required value: can not be empty"
            )),
            "DoNotSchedule" | "ScheduleAnyway" => {}
            other => errs.0.push(format!(
                "{cp}[{i}].whenUnsatisfiable: Unsupported value: {}: supported values: \"DoNotSchedule\", \"ScheduleAnyway\"",
                quoted(other)
            )),
        }
        if c.label_selector.is_some() {
            errs.0.push(format!(
                "{cp}[{i}].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod"
            ));
        }
        if constraints[..i].iter().any(|p| {
            p.topology_key == c.topology_key && p.when_unsatisfiable == c.when_unsatisfiable
        }) {
            errs.0.push(format!(
                "{cp}[{i}]: Duplicate value: \"{{{}, {}}}\"",
                c.topology_key, c.when_unsatisfiable
            ));
        }
    }
    errs.into_result()?;
    if defaulting == "System" {
        return Ok(SpreadArgs::default());
    }
    Ok(SpreadArgs {
        system_defaulted: false,
        default_constraints: constraints
            .into_iter()
            .map(|c| {
                (
                    i64::from(c.max_skew),
                    c.topology_key,
                    c.when_unsatisfiable == "DoNotSchedule",
                )
            })
            .collect(),
    })
}

/// `InterPodAffinityArgs`: hardPodAffinityWeight defaults to 1, in [0, 100].
pub fn inter_pod_affinity(v: &Value, at: &str) -> Result<InterPodAffinityArgs, ConfigError> {
    let o = Obj::new(v, at.to_string(), "InterPodAffinityArgs")?;
    o.only(&[
        "hardPodAffinityWeight",
        "ignorePreferredTermsOfExistingPods",
    ])?;
    let d = InterPodAffinityArgs::default();
    let args = InterPodAffinityArgs {
        hard_pod_affinity_weight: o
            .int32("hardPodAffinityWeight")?
            .unwrap_or(d.hard_pod_affinity_weight),
        ignore_preferred_terms_of_existing_pods: o
            .bool("ignorePreferredTermsOfExistingPods")?
            .unwrap_or(d.ignore_preferred_terms_of_existing_pods),
    };
    let mut errs = Errors::default();
    if !(0..=100).contains(&args.hard_pod_affinity_weight) {
        errs.invalid(
            o.path("hardPodAffinityWeight"),
            args.hard_pod_affinity_weight,
            "not in valid range [0, 100]",
        );
    }
    errs.into_result()?;
    Ok(args)
}

/// `NodeAffinityArgs`: `addedAffinity` is a core/v1 NodeAffinity.
pub fn node_affinity(v: &Value, at: &str) -> Result<NodeAffinityArgs, ConfigError> {
    let o = Obj::new(v, at.to_string(), "NodeAffinityArgs")?;
    o.only(&["addedAffinity"])?;
    let Some(aa) = o.get("addedAffinity") else {
        return Ok(NodeAffinityArgs::default());
    };
    let na: k8s_openapi::api::core::v1::NodeAffinity = serde_json::from_value(aa.clone())
        .map_err(|e| ConfigError(format!("{}: {e}", o.path("addedAffinity"))))?;
    Ok(NodeAffinityArgs {
        added_required: na
            .required_during_scheduling_ignored_during_execution
            .map(|r| NodeSelectorTerms {
                terms: r
                    .node_selector_terms
                    .iter()
                    .map(NodeTerm::compile)
                    .collect(),
            }),
        added_preferred: na
            .preferred_during_scheduling_ignored_during_execution
            .unwrap_or_default()
            .iter()
            .map(|p| (i64::from(p.weight), NodeTerm::compile(&p.preference)))
            .collect(),
    })
}

/// `DefaultPreemptionArgs`: read and validated; preemption here does not use the numbers.
pub fn default_preemption(v: &Value, at: &str) -> Result<(), ConfigError> {
    let o = Obj::new(v, at.to_string(), "DefaultPreemptionArgs")?;
    o.only(&["minCandidateNodesPercentage", "minCandidateNodesAbsolute"])?;
    let pct = o.int32("minCandidateNodesPercentage")?.unwrap_or(10);
    let abs = o.int32("minCandidateNodesAbsolute")?.unwrap_or(100);
    let mut errs = Errors::default();
    let (pp, ap) = (
        o.path("minCandidateNodesPercentage"),
        o.path("minCandidateNodesAbsolute"),
    );
    if !(0..=100).contains(&pct) {
        errs.invalid(pp.clone(), pct, "not in valid range [0, 100]");
    }
    if abs < 0 {
        errs.invalid(ap.clone(), abs, "not in valid range [0, inf)");
    }
    if pct == 0 && abs == 0 {
        errs.invalid(
            pp,
            pct,
            "cannot be zero at the same time as minCandidateNodesAbsolute",
        );
        errs.invalid(
            ap,
            abs,
            "cannot be zero at the same time as minCandidateNodesPercentage",
        );
    }
    errs.into_result()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_wrongly_typed_value_names_its_field() {
        let e = inter_pod_affinity(&json!({"hardPodAffinityWeight": "5"}), "args").unwrap_err();
        assert_eq!(
            e.0,
            "args.hardPodAffinityWeight: cannot unmarshal string into Go struct field InterPodAffinityArgs.hardPodAffinityWeight of type int32"
        );
        let e = node_resources_fit(
            &json!({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": "1"}]}}),
            "args",
        )
        .unwrap_err();
        assert!(
            e.0.starts_with("args.scoringStrategy.resources[0].weight: cannot unmarshal string"),
            "{e}"
        );
    }

    #[test]
    fn upstreams_defaults_and_messages() {
        // Weight 0 is "unset": SetDefaults makes it 1.
        let a = node_resources_fit(
            &json!({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 0}]}}),
            "a",
        )
        .unwrap();
        assert_eq!(a.resources[0].weight, 1);
        let e = node_resources_fit(
            &json!({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 101}]}}),
            "a",
        )
        .unwrap_err();
        assert_eq!(
            e.0,
            "a.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]"
        );
        let e = inter_pod_affinity(&json!({"hardPodAffinityWeight": 200}), "a").unwrap_err();
        assert_eq!(
            e.0,
            "a.hardPodAffinityWeight: Invalid value: 200: not in valid range [0, 100]"
        );
        let e = pod_topology_spread(&json!({"defaultingType": "Sometimes"}), "a").unwrap_err();
        assert_eq!(
            e.0,
            "a.defaultingType: Unsupported value: \"Sometimes\": supported values: \"System\", \"List\""
        );
        let e = node_resources_fit(&json!({"scoringStrategy": {"type": "RequestedToCapacityRatio",
            "requestedToCapacityRatio": {"shape": [{"utilization": 50, "score": 5}, {"utilization": 10, "score": 11}]}}}), "a")
            .unwrap_err();
        assert_eq!(
            e.0,
            "[a.scoringStrategy.shape[1].utilization: Invalid value: 10: values must be sorted in increasing order, \
             a.scoringStrategy.shape[1].score: Invalid value: 11: not in valid range [0, 10]]"
        );
        let e = node_resources_balanced_allocation(
            &json!({"resources": [{"name": "cpu", "weight": 2}]}),
            "a",
        )
        .unwrap_err();
        assert_eq!(e.0, "a.resources[0].weight: Invalid value: 2: must be 1");
        let e = inter_pod_affinity(&json!({"hardPodAffinityWeigth": 2}), "a").unwrap_err();
        assert_eq!(
            e.0,
            "strict decoding error: unknown field \"a.hardPodAffinityWeigth\""
        );
    }
}
