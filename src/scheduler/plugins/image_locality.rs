//! ImageLocality: favours nodes that already have the pod's images, weighted by how widely each
//! image is spread (an image on every node says little), clamped to [23MB, 1000MB × containers].

use crate::scheduler::framework::{CycleContext, MAX_NODE_SCORE, ScorePlugin, Status};
use crate::scheduler::snapshot::NodeInfo;

pub const NAME: &str = "ImageLocality";
/// The label narrow columns and one-line sums use (the CLI's score table, view 5).
pub const SHORT: &str = "Image";
const MB: i64 = 1024 * 1024;
const MIN_THRESHOLD: i64 = 23 * MB;
const MAX_CONTAINER_THRESHOLD: i64 = 1000 * MB;

/// Per cycle, each container image of the pod resolved once to (snapshot image id, number of
/// nodes having it); images no node has are dropped (they add nothing anywhere).
#[derive(Default)]
pub struct ImageLocality {
    resolved: Vec<(u32, usize)>,
}

impl ScorePlugin for ImageLocality {
    fn name(&self) -> &'static str {
        NAME
    }

    fn pre_score(&mut self, cx: &CycleContext, _feasible: &[usize]) -> Status {
        // Upstream has no PreScore here; this only caches name lookups, it never skips.
        self.resolved = cx
            .pod
            .images
            .iter()
            .filter_map(|image| {
                let id = *cx.snapshot.image_ids.get(image)?;
                let spread = cx.snapshot.image_num_nodes.get(image).copied().unwrap_or(0);
                Some((id, spread))
            })
            .collect();
        Status::success()
    }

    fn score(&self, cx: &CycleContext, node: &NodeInfo) -> i64 {
        let total_nodes = cx.snapshot.num_nodes();
        let mut sum: i64 = 0;
        for (id, spread) in &self.resolved {
            if let Ok(i) = node.image_ids.binary_search_by_key(id, |(x, _)| *x) {
                let size = node.image_ids[i].1;
                sum += (size as f64 * *spread as f64 / total_nodes as f64) as i64;
            }
        }
        calculate_priority(sum, cx.pod.images.len() as i64)
    }
}

fn calculate_priority(sum: i64, num_containers: i64) -> i64 {
    let max_threshold = MAX_CONTAINER_THRESHOLD * num_containers;
    let sum = if sum < MIN_THRESHOLD {
        MIN_THRESHOLD
    } else if sum > max_threshold {
        max_threshold
    } else {
        sum
    };
    if max_threshold <= MIN_THRESHOLD {
        return 0;
    }
    MAX_NODE_SCORE * (sum - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds() {
        assert_eq!(calculate_priority(0, 1), 0);
        assert_eq!(calculate_priority(2000 * MB, 1), 100);
        // 250MB + 10MB on one container pod, image on 1 of 1 nodes (image_locality_test: 2).
        assert_eq!(calculate_priority(40 * MB, 1), 1);
    }
}
