//! The image store of each simulated node: an image pulled once stays on its node, so a
//! container's `imagePullPolicy` decides as upstream's image manager does
//! (`pkg/kubelet/images/image_manager.go`): `Always` pulls every time, `IfNotPresent` only what
//! the node lacks, `Never` nothing (a missing image then leaves the container waiting until
//! the image comes to the node). Nothing is downloaded: the store is what the simulated
//! kubelets remember, forgotten when serve stops.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::scheduler::podinfo::normalized_image_name;

/// What a kubelet does about one container's image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Image {
    /// Pull it (Pulling, then Pulled "Successfully pulled image …").
    Pull,
    /// Use the copy on the node (Pulled "Container image … already present on machine").
    Present,
    /// `Never` and not on the node: the container waits with ErrImageNeverPull.
    NeverPull,
}

/// Images present per node, shared by the kubelets' tasks.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeImages(Arc<Mutex<HashMap<String, HashSet<String>>>>);

impl NodeImages {
    /// Upstream's `shouldPullImage` on this node's store. A policy left empty is treated as
    /// the API server defaults it (`IfNotPresent`, `Always` for `:latest` or no tag).
    pub(crate) fn decide(&self, node: &str, image: &str, policy: &str) -> Image {
        let present = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(node)
            .is_some_and(|images| images.contains(&normalized_image_name(image)));
        let policy = match policy {
            "" if pulls_always(image) => "Always",
            "" => "IfNotPresent",
            p => p,
        };
        match (policy, present) {
            ("Never", true) | ("IfNotPresent", true) => Image::Present,
            ("Never", false) => Image::NeverPull,
            _ => Image::Pull,
        }
    }

    /// The images the Node object says it holds (`status.images[].names`, as a scenario may
    /// set them): its runtime has them, so they are not pulled again — and the scheduler's
    /// ImageLocality, which reads the same list, and the kubelet agree.
    pub(crate) fn reported(&self, node: &str, node_object: &Value) {
        let names: Vec<String> = node_object
            .pointer("/status/images")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|i| i.get("names").and_then(Value::as_array))
            .flatten()
            .filter_map(Value::as_str)
            .map(normalized_image_name)
            .collect();
        if names.is_empty() {
            return;
        }
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(node.to_string())
            .or_default()
            .extend(names);
    }

    /// `image` is now on `node`.
    pub(crate) fn pulled(&self, node: &str, image: &str) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(node.to_string())
            .or_default()
            .insert(normalized_image_name(image));
    }
}

/// The API server's default: `Always` for an image tagged `latest` or not tagged at all (a
/// digest counts as a tag).
fn pulls_always(image: &str) -> bool {
    if image.contains('@') {
        return false;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag == "latest",
        None => true,
    }
}

/// Upstream's event messages for each outcome.
pub(crate) fn present_message(image: &str) -> String {
    format!("Container image {image:?} already present on machine")
}

pub(crate) fn never_pull_message(image: &str) -> String {
    format!("Container image {image:?} is not present with pull policy of Never")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pulls_follow_the_policy_and_what_the_node_holds() {
        let images = NodeImages::default();
        assert_eq!(
            images.decide("n1", "nginx:1.27", "IfNotPresent"),
            Image::Pull
        );
        assert_eq!(images.decide("n1", "nginx:1.27", "Never"), Image::NeverPull);
        images.pulled("n1", "nginx:1.27");
        assert_eq!(
            images.decide("n1", "nginx:1.27", "IfNotPresent"),
            Image::Present
        );
        assert_eq!(images.decide("n1", "nginx:1.27", "Never"), Image::Present);
        assert_eq!(images.decide("n1", "nginx:1.27", "Always"), Image::Pull);
        // Another node has its own store.
        assert_eq!(
            images.decide("n2", "nginx:1.27", "IfNotPresent"),
            Image::Pull
        );
    }

    #[test]
    fn an_image_the_node_object_reports_is_present() {
        let images = NodeImages::default();
        let node = serde_json::json!({"status": {"images": [
            {"names": ["example.com/app-3:1.0", "example.com/app-3@sha256:abc"], "sizeBytes": 200_000_000},
            {"names": ["busybox"], "sizeBytes": 4_000_000},
        ]}});
        images.reported("n", &node);
        assert_eq!(
            images.decide("n", "example.com/app-3:1.0", "IfNotPresent"),
            Image::Present
        );
        assert_eq!(
            images.decide("n", "busybox:latest", "Never"),
            Image::Present
        );
        assert_eq!(
            images.decide("n", "example.com/app-4:1.0", "Never"),
            Image::NeverPull
        );
        assert_eq!(images.decide("other", "busybox", "Never"), Image::NeverPull);
    }

    #[test]
    fn an_unset_policy_is_the_api_servers_default() {
        let images = NodeImages::default();
        for image in [
            "nginx",
            "nginx:latest",
            "registry.local:5000/app",
            "a/b:latest",
        ] {
            images.pulled("n", image);
            assert_eq!(images.decide("n", image, ""), Image::Pull, "{image}");
        }
        for image in [
            "nginx:1.27",
            "registry.local:5000/app:v1",
            "nginx@sha256:abc",
        ] {
            images.pulled("n", image);
            assert_eq!(images.decide("n", image, ""), Image::Present, "{image}");
        }
    }

    #[test]
    fn messages_are_upstreams() {
        assert_eq!(
            present_message("nginx:1.27"),
            r#"Container image "nginx:1.27" already present on machine"#
        );
        assert_eq!(
            never_pull_message("app:v1"),
            r#"Container image "app:v1" is not present with pull policy of Never"#
        );
    }
}
