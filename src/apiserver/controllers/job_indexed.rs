//! What the Job controller does differently for `completionMode: Indexed` (upstream
//! `indexed_job_utils.go`): each pod carries its completion index (annotation and label
//! `batch.kubernetes.io/job-completion-index`, the `JOB_COMPLETION_INDEX` variable, hostname
//! `<job>-<index>`), the lowest indexes neither succeeded nor running are started first, an
//! index counts once however many of its pods succeed, and `status.completedIndexes` lists
//! them in upstream's compressed form (`0,1,3-7`).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::controllers::workload::{pod_from_template, pod_ready, s};
use crate::apiserver::registry::batch::job::COMPLETION_INDEX;

const INDEX_ENV: &str = "JOB_COMPLETION_INDEX";
/// `names.MaxGeneratedNameLength`: 63 less the five random characters.
const MAX_GENERATED_NAME: usize = 58;

/// A pod's completion index (upstream `getCompletionIndex`: the annotation, a non-negative
/// integer).
pub(crate) fn index_of(pod: &Value) -> Option<i64> {
    pod.pointer("/metadata/annotations")
        .and_then(|a| a.get(COMPLETION_INDEX))
        .and_then(Value::as_str)
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|i| *i >= 0)
}

/// `parseIndexesFromString`: `0,1,3-7` → {0, 1, 3, …, 7}, indexes at or past `completions`
/// dropped, a corrupted interval skipped.
pub(crate) fn parse(indexes: &str, completions: i64) -> BTreeSet<i64> {
    let mut out = BTreeSet::new();
    for part in indexes.split(',').filter(|p| !p.is_empty()) {
        let mut ends = part.splitn(2, '-');
        let Some(Ok(first)) = ends.next().map(str::parse::<i64>) else {
            continue;
        };
        if first >= completions {
            break;
        }
        let last = match ends.next().map(str::parse::<i64>) {
            None => first,
            Some(Ok(l)) => l.min(completions - 1),
            Some(Err(_)) => continue,
        };
        out.extend(first..=last);
    }
    out
}

/// `orderedIntervals.String`: runs of three or more as `a-b`, a pair as `a,b`.
pub(crate) fn format(indexes: &BTreeSet<i64>) -> String {
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for &i in indexes {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == i => *last = i,
            _ => runs.push((i, i)),
        }
    }
    runs.iter()
        .map(|&(a, b)| match b - a {
            0 => a.to_string(),
            1 => format!("{a},{b}"),
            _ => format!("{a}-{b}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `firstPendingIndexes`: the `count` lowest indexes below `completions` that are neither
/// `settled` (succeeded, or failed for good) nor have a pod still running.
pub(crate) fn pending(
    completions: i64,
    settled: &BTreeSet<i64>,
    active: &[Arc<Value>],
    count: usize,
) -> Vec<i64> {
    let running: BTreeSet<i64> = active.iter().filter_map(|p| index_of(p)).collect();
    (0..completions)
        .filter(|i| !settled.contains(i) && !running.contains(i))
        .take(count)
        .collect()
}

/// `appendDuplicatedIndexPodsForRemoval`: of the active pods, those to delete — without an
/// index, with one at or past `completions`, or a second pod of one index (of those, a ready
/// one and then the oldest is kept, as upstream's `ActivePods` order keeps the last) — and
/// those to keep.
pub(crate) fn surplus(
    active: Vec<Arc<Value>>,
    completions: i64,
) -> (Vec<Arc<Value>>, Vec<Arc<Value>>) {
    let mut by_index: Vec<(Option<i64>, Arc<Value>)> =
        active.into_iter().map(|p| (index_of(&p), p)).collect();
    by_index.sort_by(|(a, pa), (b, pb)| {
        a.cmp(b)
            .then_with(|| pod_ready(pa).cmp(&pod_ready(pb)))
            .then_with(|| {
                s(pb, "/metadata/creationTimestamp").cmp(s(pa, "/metadata/creationTimestamp"))
            })
    });
    let (mut remove, mut keep) = (Vec::new(), Vec::new());
    let mut iter = by_index.into_iter().peekable();
    while let Some((ix, p)) = iter.next() {
        let next_same = iter.peek().is_some_and(|(n, _)| *n == ix);
        match ix {
            Some(i) if i < completions && !next_same => keep.push(p),
            _ => remove.push(p),
        }
    }
    (remove, keep)
}

/// The pod of index `index`: its index as annotation and label, `JOB_COMPLETION_INDEX` in
/// every container read from that label (PodIndexLabel, on by default since 1.28), hostname
/// `<job>-<index>`, and `generateName` `<job>-<index>-` (`podGenerateNameWithIndex`).
pub(crate) fn pod(job: &Value, template: &Value, index: i64) -> Value {
    let mut pod = pod_from_template(job, template, None);
    let name = s(job, "/metadata/name");
    let suffix = format!("-{index}-");
    let prefix = if name.len() + suffix.len() > MAX_GENERATED_NAME {
        let keep = MAX_GENERATED_NAME.saturating_sub(suffix.len());
        format!("{}{suffix}", name.get(..keep).unwrap_or(name))
    } else {
        format!("{name}{suffix}")
    };
    pod["metadata"]["generateName"] = json!(prefix);
    for k in ["annotations", "labels"] {
        if !pod["metadata"][k].is_object() {
            pod["metadata"][k] = json!({});
        }
        pod["metadata"][k][COMPLETION_INDEX] = json!(index.to_string());
    }
    pod["spec"]["hostname"] = json!(format!("{name}-{index}"));
    let field_path = format!("metadata.labels['{COMPLETION_INDEX}']");
    for list in ["initContainers", "containers"] {
        let Some(cs) = pod["spec"].get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for c in cs {
            if !c.get("env").is_some_and(Value::is_array) {
                c["env"] = json!([]);
            }
            let Some(env) = c["env"].as_array_mut() else {
                continue;
            };
            if !env.iter().any(|e| s(e, "/name") == INDEX_ENV) {
                env.push(json!({"name": INDEX_ENV,
                    "valueFrom": {"fieldRef": {"fieldPath": field_path}}}));
            }
        }
    }
    pod
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[i64]) -> BTreeSet<i64> {
        v.iter().copied().collect()
    }

    fn with_index(i: Option<i64>, created: &str) -> Arc<Value> {
        let mut p = json!({"metadata": {"creationTimestamp": created, "annotations": {}}});
        if let Some(i) = i {
            p["metadata"]["annotations"][COMPLETION_INDEX] = json!(i.to_string());
        }
        Arc::new(p)
    }

    /// Upstream's `TestIntervalsString`/`TestParseIndexesFromString` cases, as a round trip.
    #[test]
    fn completed_indexes_read_and_written_as_upstream() {
        assert_eq!(format(&set(&[])), "");
        assert_eq!(format(&set(&[0])), "0");
        assert_eq!(format(&set(&[0, 1])), "0,1");
        assert_eq!(format(&set(&[0, 1, 2, 5, 7, 8, 9])), "0-2,5,7-9");
        assert_eq!(parse("0-2,5,7-9", 10), set(&[0, 1, 2, 5, 7, 8, 9]));
        assert_eq!(
            parse("1,3-5,7", 5),
            set(&[1, 3, 4]),
            "past completions dropped"
        );
        assert_eq!(
            parse("a,2,3-b,4", 10),
            set(&[2, 4]),
            "corrupted intervals skipped"
        );
        assert_eq!(parse("", 3), set(&[]));
    }

    #[test]
    fn the_lowest_free_indexes_start_first() {
        let active = [with_index(Some(1), "t")];
        assert_eq!(pending(6, &set(&[0, 3]), &active, 2), vec![2, 4]);
        assert_eq!(pending(6, &set(&[0, 3]), &active, 9), vec![2, 4, 5]);
        assert!(pending(2, &set(&[0, 1]), &[], 3).is_empty());
    }

    #[test]
    fn duplicates_and_stray_indexes_are_surplus() {
        let active = vec![
            with_index(Some(0), "2026-01-01T00:00:01Z"),
            with_index(Some(0), "2026-01-01T00:00:02Z"),
            with_index(Some(1), "2026-01-01T00:00:01Z"),
            with_index(Some(5), "2026-01-01T00:00:01Z"),
            with_index(None, "2026-01-01T00:00:01Z"),
        ];
        let (remove, keep) = surplus(active, 3);
        let idx = |v: &[Arc<Value>]| v.iter().map(|p| index_of(p)).collect::<Vec<_>>();
        assert_eq!(idx(&keep), vec![Some(0), Some(1)]);
        assert_eq!(
            keep[0]["metadata"]["creationTimestamp"], "2026-01-01T00:00:01Z",
            "the older of index 0 stays"
        );
        assert_eq!(idx(&remove), vec![None, Some(0), Some(5)]);
    }

    #[test]
    fn an_indexed_pod_knows_its_index() {
        let job = json!({"metadata": {"name": "work", "namespace": "default", "uid": "u"}});
        let template = json!({"metadata": {"labels": {"app": "w"}}, "spec": {
            "initContainers": [{"name": "i", "image": "busybox"}],
            "containers": [{"name": "c", "image": "busybox",
                            "env": [{"name": "JOB_COMPLETION_INDEX", "value": "mine"}]}]}});
        let p = pod(&job, &template, 3);
        assert_eq!(p["metadata"]["generateName"], "work-3-");
        assert_eq!(p["metadata"]["annotations"][COMPLETION_INDEX], "3");
        assert_eq!(p["metadata"]["labels"][COMPLETION_INDEX], "3");
        assert_eq!(p["metadata"]["labels"]["app"], "w");
        assert_eq!(p["spec"]["hostname"], "work-3");
        assert_eq!(
            p["spec"]["initContainers"][0]["env"][0]["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.labels['batch.kubernetes.io/job-completion-index']"
        );
        // A container that sets the variable itself keeps its own.
        assert_eq!(
            p["spec"]["containers"][0]["env"],
            template["spec"]["containers"][0]["env"]
        );
        let long = json!({"metadata": {"name": "a".repeat(60), "namespace": "d", "uid": "u"}});
        let g = pod(&long, &template, 12)["metadata"]["generateName"].clone();
        assert_eq!(g.as_str().map(str::len), Some(58));
        assert!(g.as_str().unwrap_or_default().ends_with("a-12-"));
    }
}
