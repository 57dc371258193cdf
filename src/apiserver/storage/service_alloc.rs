//! Service ClusterIPs and NodePorts (upstream `pkg/registry/core/service/ipallocator` and
//! `portallocator`). Upstream keeps a bitmap per range in etcd; here what is allocated is read
//! from the stored Services themselves at each allocation, so a restart, or another backend
//! behind the `Storage` trait, starts from the truth with nothing to rebuild or repair. The only
//! state of its own is what a create has taken but not yet stored: reservations, held under one
//! lock, so two concurrent creates can never be handed the same address or port. A reservation
//! ends when its Service is stored (`committed`) or, for a create that failed after allocating,
//! after [`RESERVATION_TTL`] — what upstream's repair loop does for leaked bits.

use std::collections::{HashMap, HashSet};
use std::net::Ipv4Addr;
use std::str::FromStr;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::apiserver::storage::interface::Storage;

/// Where the Services live in the keyspace (upstream's `/registry/services/specs/`).
pub(crate) const SERVICES_PREFIX: &str = "/registry/services/specs/";

/// How long a reservation of a create that never stored its Service is honoured.
const RESERVATION_TTL: Duration = Duration::from_secs(10);

/// An IPv4 CIDR (`--service-cluster-ip-range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Cidr {
    base: u32,
    prefix: u8,
}

impl FromStr for Ipv4Cidr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("invalid CIDR address: {s}");
        let (ip, len) = s.split_once('/').ok_or_else(bad)?;
        let ip: Ipv4Addr = ip.parse().map_err(|_| bad())?;
        let prefix: u8 = len.parse().map_err(|_| bad())?;
        if prefix > 32 {
            return Err(bad());
        }
        // kube-apiserver's ServiceIPRange needs room for the network address, the
        // `kubernetes` Service and at least one more (a /30 at most).
        if prefix > 30 {
            return Err(format!(
                "specified --service-cluster-ip-range {s} is too small: a /30 or larger is needed"
            ));
        }
        let mask = u32::MAX << (32 - prefix);
        Ok(Ipv4Cidr {
            base: u32::from(ip) & mask,
            prefix,
        })
    }
}

impl std::fmt::Display for Ipv4Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", Ipv4Addr::from(self.base), self.prefix)
    }
}

impl Ipv4Cidr {
    fn size(&self) -> u64 {
        1u64 << (32 - self.prefix)
    }
    /// The addresses a Service may get: not the network address nor the broadcast one.
    fn usable(&self, ip: u32) -> bool {
        let off = u64::from(ip.wrapping_sub(self.base));
        ip >= self.base && off >= 1 && off + 1 < self.size()
    }
    /// The first usable address: the `kubernetes` Service's.
    pub(crate) fn first(&self) -> Ipv4Addr {
        Ipv4Addr::from(self.base + 1)
    }
}

/// A port range (`--service-node-port-range`, `30000-32767`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    base: u16,
    size: u16,
}

impl FromStr for PortRange {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("unable to parse port range: {s}");
        let (lo, hi) = match s.split_once('-') {
            Some((lo, hi)) => (lo.trim(), hi.trim()),
            None => (s.trim(), s.trim()),
        };
        let lo: u16 = lo.parse().map_err(|_| bad())?;
        let hi: u16 = hi.parse().map_err(|_| bad())?;
        if lo == 0 || hi < lo {
            return Err(bad());
        }
        Ok(PortRange {
            base: lo,
            size: hi - lo + 1,
        })
    }
}

impl std::fmt::Display for PortRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}-{}",
            self.base,
            u32::from(self.base) + u32::from(self.size) - 1
        )
    }
}

impl PortRange {
    fn contains(&self, p: u16) -> bool {
        p >= self.base && u32::from(p) < u32::from(self.base) + u32::from(self.size)
    }
}

/// The ranges Services are allocated from; kube-apiserver's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceRanges {
    pub cluster_ip: Ipv4Cidr,
    pub node_ports: PortRange,
}

impl Default for ServiceRanges {
    fn default() -> Self {
        ServiceRanges {
            cluster_ip: Ipv4Cidr {
                base: u32::from(Ipv4Addr::new(10, 96, 0, 0)),
                prefix: 12,
            },
            node_ports: PortRange {
                base: 30000,
                size: 2768,
            },
        }
    }
}

/// Why an address or port was refused, in upstream's words (`ipallocator.ErrAllocated`,
/// `ErrNotInRange`, `portallocator.ErrAllocated`, `ErrNotInRange`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AllocError {
    IpAllocated,
    IpNotInRange { ip: Ipv4Addr, range: String },
    PortAllocated,
    PortNotInRange { range: String },
    Full,
}

impl std::fmt::Display for AllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AllocError::IpAllocated => write!(f, "provided IP is already allocated"),
            AllocError::IpNotInRange { ip, range } => write!(
                f,
                "the provided IP ({ip}) is not in the valid range. The range of valid IPs is {range}"
            ),
            AllocError::PortAllocated => write!(f, "provided port is already allocated"),
            AllocError::PortNotInRange { range } => write!(
                f,
                "provided port is not in the valid range. The range of valid ports is {range}"
            ),
            AllocError::Full => write!(f, "range is full"),
        }
    }
}

#[derive(Debug, Default)]
struct Reservations {
    ips: HashMap<u32, (String, Instant)>,
    ports: HashMap<u16, (String, Instant)>,
}

/// The allocator: the ranges and the reservations of creates in flight.
#[derive(Debug, Default)]
pub(crate) struct ServiceAllocator {
    pub(crate) ranges: ServiceRanges,
    reserved: Mutex<Reservations>,
}

/// One allocation in progress: what is in use, and what this create has taken so far. Nothing
/// is reserved until [`Allocation::commit`]; dropped without it, it takes nothing.
pub(crate) struct Allocation<'a> {
    ranges: ServiceRanges,
    guard: MutexGuard<'a, Reservations>,
    used_ips: HashSet<u32>,
    used_ports: HashSet<u16>,
    taken_ips: Vec<u32>,
    taken_ports: Vec<u16>,
}

/// The ClusterIPs and NodePorts a stored Service holds.
pub(crate) fn held_by(svc: &Value) -> (Vec<Ipv4Addr>, Vec<u16>) {
    let ips = svc
        .pointer("/spec/clusterIPs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(svc.pointer("/spec/clusterIP"))
        .filter_map(Value::as_str)
        .filter_map(|s| s.parse().ok())
        .collect();
    let ports = svc
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("nodePort").and_then(Value::as_u64))
        .filter_map(|p| u16::try_from(p).ok())
        .collect();
    (ips, ports)
}

impl ServiceAllocator {
    pub(crate) fn new(ranges: ServiceRanges) -> Self {
        ServiceAllocator {
            ranges,
            reserved: Mutex::new(Reservations::default()),
        }
    }

    /// Start an allocation for the Service at `key`: what the stored Services hold plus the
    /// live reservations of other creates is in use.
    pub(crate) fn begin(&self, store: &dyn Storage, key: &str) -> Allocation<'_> {
        let mut guard = self.reserved.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        guard
            .ips
            .retain(|_, (k, at)| k != key && now.duration_since(*at) < RESERVATION_TTL);
        guard
            .ports
            .retain(|_, (k, at)| k != key && now.duration_since(*at) < RESERVATION_TTL);
        let mut used_ips: HashSet<u32> = guard.ips.keys().copied().collect();
        let mut used_ports: HashSet<u16> = guard.ports.keys().copied().collect();
        for svc in store.list(SERVICES_PREFIX).0 {
            let (ips, ports) = held_by(&svc);
            used_ips.extend(ips.into_iter().map(u32::from));
            used_ports.extend(ports);
        }
        Allocation {
            ranges: self.ranges,
            guard,
            used_ips,
            used_ports,
            taken_ips: Vec::new(),
            taken_ports: Vec::new(),
        }
    }

    /// The Service at `key` is stored: what it holds is now read from the store.
    pub(crate) fn committed(&self, key: &str) {
        let mut guard = self.reserved.lock().unwrap_or_else(|e| e.into_inner());
        guard.ips.retain(|_, (k, _)| k != key);
        guard.ports.retain(|_, (k, _)| k != key);
    }
}

/// A random number below `n` (n > 0), for where a dynamic allocation starts looking.
fn random_below(n: u64) -> u64 {
    let mut buf = [0u8; 8];
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut buf);
    u64::from_le_bytes(buf) % n.max(1)
}

impl Allocation<'_> {
    /// The requested address if it is free and in range, else any free one. Dynamic addresses
    /// come from the upper part of the range first, as upstream keeps its lower part (1/16, at
    /// least 16, at most 256 addresses) for addresses clients ask for.
    pub(crate) fn ip(&mut self, requested: Option<Ipv4Addr>) -> Result<Ipv4Addr, AllocError> {
        let cidr = self.ranges.cluster_ip;
        if let Some(ip) = requested {
            let n = u32::from(ip);
            if !cidr.usable(n) {
                return Err(AllocError::IpNotInRange {
                    ip,
                    range: cidr.to_string(),
                });
            }
            if !self.used_ips.insert(n) {
                return Err(AllocError::IpAllocated);
            }
            self.taken_ips.push(n);
            return Ok(ip);
        }
        let size = cidr.size();
        let reserved = (size / 16).clamp(16, 256).min(size.saturating_sub(2));
        let bands = [(reserved, size - 1), (1, reserved.max(1))];
        for (lo, hi) in bands {
            if hi <= lo {
                continue;
            }
            let span = hi - lo;
            let start = random_below(span);
            for i in 0..span {
                let off = lo + (start + i) % span;
                let n = cidr.base + off as u32;
                if cidr.usable(n) && self.used_ips.insert(n) {
                    self.taken_ips.push(n);
                    return Ok(Ipv4Addr::from(n));
                }
            }
        }
        Err(AllocError::Full)
    }

    /// The requested node port if it is free and in range, else any free one, from above the
    /// static subrange first.
    pub(crate) fn port(&mut self, requested: Option<u16>) -> Result<u16, AllocError> {
        let range = self.ranges.node_ports;
        if let Some(p) = requested {
            if !range.contains(p) {
                return Err(AllocError::PortNotInRange {
                    range: range.to_string(),
                });
            }
            if !self.used_ports.insert(p) {
                return Err(AllocError::PortAllocated);
            }
            self.taken_ports.push(p);
            return Ok(p);
        }
        // Upstream's static subrange for node ports: the lower size/32 ports (at least 16, at
        // most 128; none under 16) are left for ports clients ask for, dynamic ones come from
        // above first. A dynamic port took 30080 before a client's `--node-port=30080`.
        let size = u64::from(range.size);
        let reserved = if size < 16 {
            0
        } else {
            (size / 32).clamp(16, 128)
        };
        for (lo, hi) in [(reserved, size), (0, reserved)] {
            if hi <= lo {
                continue;
            }
            let span = hi - lo;
            let start = random_below(span);
            for i in 0..span {
                let p = range.base + (lo + (start + i) % span) as u16;
                if self.used_ports.insert(p) {
                    self.taken_ports.push(p);
                    return Ok(p);
                }
            }
        }
        Err(AllocError::Full)
    }

    /// Hold what this allocation took for the Service at `key` until it is stored.
    pub(crate) fn commit(mut self, key: &str) {
        let now = Instant::now();
        for ip in std::mem::take(&mut self.taken_ips) {
            self.guard.ips.insert(ip, (key.to_string(), now));
        }
        for p in std::mem::take(&mut self.taken_ports) {
            self.guard.ports.insert(p, (key.to_string(), now));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::storage::store::Store;

    #[test]
    fn ranges_parse_as_the_flags_write_them() {
        let r = ServiceRanges::default();
        assert_eq!(r.cluster_ip.to_string(), "10.96.0.0/12");
        assert_eq!(r.node_ports.to_string(), "30000-32767");
        assert_eq!(r.cluster_ip.first(), Ipv4Addr::new(10, 96, 0, 1));
        assert!("10.0.0.0/31".parse::<Ipv4Cidr>().is_err());
        assert!("30000-29999".parse::<PortRange>().is_err());
    }

    #[test]
    fn concurrent_allocations_never_share() {
        let store = Store::new(Default::default());
        let alloc = ServiceAllocator::new(ServiceRanges {
            cluster_ip: "10.0.0.0/24".parse().unwrap_or_else(|e| panic!("{e}")),
            node_ports: "30000-30199".parse().unwrap_or_else(|e| panic!("{e}")),
        });
        let taken: Vec<(Ipv4Addr, u16)> = std::thread::scope(|sc| {
            let workers: Vec<_> = (0..8)
                .map(|t| {
                    let (alloc, store) = (&alloc, &store);
                    sc.spawn(move || {
                        (0..25)
                            .map(|i| {
                                let key = format!("{SERVICES_PREFIX}default/s{t}-{i}");
                                let mut a = alloc.begin(store, &key);
                                let got = (a.ip(None), a.port(None));
                                a.commit(&key);
                                match got {
                                    (Ok(ip), Ok(p)) => (ip, p),
                                    other => panic!("{other:?}"),
                                }
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap_or_default())
                .collect()
        });
        let ips: HashSet<Ipv4Addr> = taken.iter().map(|t| t.0).collect();
        let ports: HashSet<u16> = taken.iter().map(|t| t.1).collect();
        assert_eq!((ips.len(), ports.len()), (200, 200));
    }

    /// Dynamic node ports stay out of the static subrange (30000-30085 of the default range)
    /// while the rest has room, so a client's explicit low port is free.
    #[test]
    fn dynamic_node_ports_leave_the_static_subrange() {
        let store = Store::new(Default::default());
        let alloc = ServiceAllocator::new(ServiceRanges::default());
        let mut a = alloc.begin(&store, "/registry/services/specs/default/a");
        for _ in 0..2000 {
            let p = a.port(None).unwrap_or_else(|e| panic!("{e}"));
            assert!(p >= 30086, "{p}");
        }
        assert_eq!(a.port(Some(30080)), Ok(30080));
    }

    #[test]
    fn a_taken_address_or_port_is_refused_until_its_reservation_ends() {
        let store = Store::new(Default::default());
        let alloc = ServiceAllocator::new(ServiceRanges {
            cluster_ip: "10.0.0.0/29".parse().unwrap_or_else(|e| panic!("{e}")),
            node_ports: "30000-30001".parse().unwrap_or_else(|e| panic!("{e}")),
        });
        let mut a = alloc.begin(&store, "/registry/services/specs/default/a");
        let ip = a.ip(None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.port(Some(30000)), Ok(30000));
        a.commit("/registry/services/specs/default/a");
        let mut b = alloc.begin(&store, "/registry/services/specs/default/b");
        assert_eq!(b.ip(Some(ip)), Err(AllocError::IpAllocated));
        assert_eq!(b.port(Some(30000)), Err(AllocError::PortAllocated));
        assert_eq!(b.port(None), Ok(30001));
        assert_eq!(b.port(None), Err(AllocError::Full));
        assert!(matches!(
            b.ip(Some(Ipv4Addr::new(10, 0, 0, 7))),
            Err(AllocError::IpNotInRange { .. })
        ));
        drop(b);
        // Nothing stored `a`: once its create says it is done (here, failed), all is free.
        alloc.committed("/registry/services/specs/default/a");
        let mut c = alloc.begin(&store, "/registry/services/specs/default/c");
        assert_eq!(c.ip(Some(ip)), Ok(ip));
        assert_eq!(c.port(Some(30000)), Ok(30000));
    }
}
