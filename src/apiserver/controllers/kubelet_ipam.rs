//! The simulated kubelets' pod addresses, as host-local IPAM hands them out: the lowest free
//! host address of the node's podCIDR. What is free is learnt from the store the first time a
//! node is seen (and again when its range looks full), so a replica that takes the kubelets
//! over by leader election never gives a new pod the address a running pod holds.

use std::collections::{BTreeSet, HashMap};

use crate::apiserver::request::context::Api;
use crate::apiserver::util::At;

/// Host addresses .2 to .254 of a /24 (the network, the gateway and broadcast stay out).
const FIRST: u32 = 2;
const LAST: u32 = 254;

#[derive(Default)]
pub(crate) struct PodIps {
    /// Per node, the host numbers in use.
    used: HashMap<String, BTreeSet<u32>>,
}

impl PodIps {
    /// An address for a new pod on `node`, or None when its whole range is held.
    pub(crate) fn allocate(&mut self, api: &Api, node: &str) -> Option<String> {
        let base = base(api, node);
        if !self.used.contains_key(node) {
            self.learn(api, node);
        }
        let used = self.used.entry(node.to_string()).or_default();
        let free = |u: &BTreeSet<u32>| (FIRST..=LAST).find(|n| !u.contains(n));
        let n = match free(used) {
            Some(n) => n,
            // Pods deleted without their kubelet (a forced delete) left their addresses.
            None => {
                *used = in_use(&pod_ips(api), node, &base);
                free(used)?
            }
        };
        used.insert(n);
        Some(format!("{base}.{n}"))
    }

    /// Learns what is in use on `node` and on every other node not yet seen, from one read of
    /// the pods: learning node by node read every pod once per node (minutes on a 5,000-node
    /// scenario whose kubelets all start their pods at once).
    fn learn(&mut self, api: &Api, node: &str) {
        let ips = pod_ips(api);
        let unseen: Vec<&str> = ips
            .keys()
            .map(String::as_str)
            .chain([node])
            .filter(|n| !self.used.contains_key(*n))
            .collect();
        for n in unseen {
            let set = in_use(&ips, n, &base(api, n));
            self.used.insert(n.to_string(), set);
        }
    }

    /// The address of a pod that stopped.
    pub(crate) fn release(&mut self, node: &str, ip: &str) {
        if let (Some(used), Some(n)) = (self.used.get_mut(node), host(ip)) {
            used.remove(&n);
        }
    }
}

/// The first three octets of the node's podCIDR (`10.244.3.0/24` → `10.244.3`).
fn base(api: &Api, node: &str) -> String {
    let cidr = api
        .store
        .get(&format!("/registry/minions/{node}"))
        .and_then(|v| {
            v.at("/spec/podCIDR")
                .and_then(|c| c.as_str())
                .map(String::from)
        })
        .unwrap_or_default();
    let octets: Vec<&str> = cidr.split('/').next().unwrap_or("").split('.').collect();
    match octets.as_slice() {
        [a, b, c, _] => format!("{a}.{b}.{c}"),
        _ => "10.244.0".to_string(),
    }
}

fn host(ip: &str) -> Option<u32> {
    ip.rsplit('.').next()?.parse().ok()
}

/// The addresses the pods hold, by the node they are bound to.
fn pod_ips(api: &Api) -> HashMap<String, Vec<String>> {
    let mut ips: HashMap<String, Vec<String>> = HashMap::new();
    for (_, item) in api.store.list_items("/registry/pods/").0 {
        let p = item.view();
        let node = p.at("/spec/nodeName").and_then(|n| n.as_str());
        let ip = p.at("/status/podIP").and_then(|i| i.as_str());
        if let (Some(node), Some(ip)) = (node, ip) {
            ips.entry(node.to_string())
                .or_default()
                .push(ip.to_string());
        }
    }
    ips
}

/// The host numbers held by the pods bound to `node` that have an address in its range.
fn in_use(ips: &HashMap<String, Vec<String>>, node: &str, base: &str) -> BTreeSet<u32> {
    let prefix = format!("{base}.");
    ips.get(node)
        .into_iter()
        .flatten()
        .filter_map(|ip| ip.strip_prefix(&prefix).and_then(|h| h.parse().ok()))
        .collect()
}
