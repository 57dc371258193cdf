//! client-go's EventCorrelator (`tools/record/events_cache.go`), which every kubelet and
//! kube-controller-manager controller puts between its recorder and the API server:
//! - the aggregator: once an object has had 10 events of one reason with different messages
//!   within 10 minutes, the next ones fold into a single "(combined from similar events): …"
//!   event (a ReplicaSet creating 10,000 pods records 9 "Created pod" events and one combined
//!   event, not 10,000);
//! - the logger: an event seen before (the same key) is not created again but its count,
//!   lastTimestamp and message updated;
//! - the spam filter: a token bucket per source and object (burst 25, one more every
//!   5 minutes); an event over it is dropped.
//!
//! Each cache holds at most `MAX_ENTRIES` keys, as upstream's LRU caches of 4,096 do: here two
//! generations of maps, the older dropped when the newer fills. It sits in front of the store
//! (what the recorders would write is decided here) and the `Api` holds it, so it lives with
//! the store rather than with the controllers that record.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const MAX_ENTRIES: usize = 4096;
/// `defaultAggregateMaxEvents`.
const AGGREGATE_MAX_EVENTS: usize = 10;
/// `defaultAggregateIntervalInSeconds`.
const AGGREGATE_INTERVAL: Duration = Duration::from_secs(600);
/// `defaultSpamBurst`, `defaultSpamQPS`.
const SPAM_BURST: f64 = 25.0;
const SPAM_QPS: f64 = 1.0 / 300.0;
const COMBINED_PREFIX: &str = "(combined from similar events): ";

/// A map that keeps at most about `2 * MAX_ENTRIES` keys: reads promote from the older
/// generation, and a full newer generation becomes the older one.
struct Generations<V> {
    new: HashMap<String, V>,
    old: HashMap<String, V>,
}

impl<V> Default for Generations<V> {
    fn default() -> Self {
        Generations {
            new: HashMap::new(),
            old: HashMap::new(),
        }
    }
}

impl<V> Generations<V> {
    fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        if !self.new.contains_key(key)
            && let Some(v) = self.old.remove(key)
        {
            self.insert(key.to_string(), v);
        }
        self.new.get_mut(key)
    }

    fn insert(&mut self, key: String, v: V) {
        if self.new.len() >= MAX_ENTRIES && !self.new.contains_key(&key) {
            self.old = std::mem::take(&mut self.new);
        }
        self.new.insert(key, v);
    }
}

struct Aggregate {
    messages: HashSet<String>,
    last: Instant,
}

struct Observed {
    name: String,
    count: u64,
    first_timestamp: String,
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

#[derive(Default)]
struct Inner {
    aggregates: Generations<Aggregate>,
    observed: Generations<Observed>,
    spam: Generations<Bucket>,
}

/// One occurrence, in the fields upstream's keys are made of.
pub(crate) struct Occurrence<'a> {
    pub(crate) component: &'a str,
    pub(crate) host: &'a str,
    pub(crate) kind: &'a str,
    pub(crate) namespace: &'a str,
    pub(crate) name: &'a str,
    pub(crate) uid: &'a str,
    pub(crate) api_version: &'a str,
    pub(crate) field_path: &'a str,
    pub(crate) type_: &'a str,
    pub(crate) reason: &'a str,
    pub(crate) reporting_controller: &'a str,
    pub(crate) reporting_instance: &'a str,
    pub(crate) message: &'a str,
}

/// What to write for an occurrence.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A new Event named `name` (count 1). `combined`: the aggregate event, whose message has
    /// the "(combined …)" prefix and which upstream writes without reportingComponent.
    Create {
        name: String,
        message: String,
        combined: bool,
    },
    /// The Event named `name` seen again: set its count, message and lastTimestamp (or create
    /// it with `first_timestamp` if it is gone).
    Update {
        name: String,
        count: u64,
        message: String,
        first_timestamp: String,
        combined: bool,
    },
    /// Over the spam filter's budget for this source and object: nothing is written.
    Skip,
}

#[derive(Default)]
pub(crate) struct EventCorrelator(Mutex<Inner>);

impl EventCorrelator {
    /// Correlate `o` at `now` (`now_text`: its RFC 3339 form); `new_name` is the name a new
    /// Event would get.
    pub(crate) fn correlate(
        &self,
        o: &Occurrence<'_>,
        now: Instant,
        now_text: &str,
        new_name: String,
    ) -> Outcome {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let source_object = [
            o.component,
            o.host,
            o.kind,
            o.namespace,
            o.name,
            o.uid,
            o.api_version,
        ]
        .concat();
        // EventAggregatorByReasonFunc's key; the message is the local key.
        let aggregate_key = [
            source_object.as_str(),
            o.type_,
            o.reason,
            o.reporting_controller,
            o.reporting_instance,
        ]
        .concat();
        let fresh = match g.aggregates.get_mut(&aggregate_key) {
            Some(a) if now.duration_since(a.last) <= AGGREGATE_INTERVAL => {
                a.messages.insert(o.message.to_string());
                a.last = now;
                None
            }
            _ => Some(Aggregate {
                messages: HashSet::from([o.message.to_string()]),
                last: now,
            }),
        };
        if let Some(a) = fresh {
            g.aggregates.insert(aggregate_key.clone(), a);
        }
        let similar = g
            .aggregates
            .get_mut(&aggregate_key)
            .map_or(0, |a| a.messages.len());
        let (cache_key, message, combined) = if similar < AGGREGATE_MAX_EVENTS {
            let event_key = [
                o.component,
                o.host,
                o.kind,
                o.namespace,
                o.name,
                o.field_path,
                o.uid,
                o.api_version,
                o.type_,
                o.reason,
                o.message,
            ]
            .concat();
            (event_key, o.message.to_string(), false)
        } else {
            // Do not let the set of messages grow past the limit (upstream's PopAny).
            if let Some(a) = g.aggregates.get_mut(&aggregate_key)
                && let Some(any) = a.messages.iter().next().cloned()
            {
                a.messages.remove(&any);
            }
            (
                aggregate_key,
                format!("{COMBINED_PREFIX}{}", o.message),
                true,
            )
        };
        // eventObserve: seen before, this is an update of that Event.
        let outcome = match g.observed.get_mut(&cache_key) {
            Some(seen) => {
                seen.count += 1;
                Outcome::Update {
                    name: seen.name.clone(),
                    count: seen.count,
                    message,
                    first_timestamp: seen.first_timestamp.clone(),
                    combined,
                }
            }
            None => {
                g.observed.insert(
                    cache_key,
                    Observed {
                        name: new_name.clone(),
                        count: 1,
                        first_timestamp: now_text.to_string(),
                    },
                );
                Outcome::Create {
                    name: new_name,
                    message,
                    combined,
                }
            }
        };
        // The spam filter runs on what would be written, as EventCorrelate does.
        let bucket = match g.spam.get_mut(&source_object) {
            Some(b) => {
                let refill = now.duration_since(b.at).as_secs_f64() * SPAM_QPS;
                b.tokens = (b.tokens + refill).min(SPAM_BURST);
                b.at = now;
                b
            }
            None => {
                g.spam.insert(
                    source_object.clone(),
                    Bucket {
                        tokens: SPAM_BURST,
                        at: now,
                    },
                );
                g.spam.get_mut(&source_object).expect("just inserted")
            }
        };
        if bucket.tokens < 1.0 {
            return Outcome::Skip;
        }
        bucket.tokens -= 1.0;
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occurrence<'a>(name: &'a str, reason: &'a str, message: &'a str) -> Occurrence<'a> {
        Occurrence {
            component: "replicaset-controller",
            host: "",
            kind: "ReplicaSet",
            namespace: "default",
            name,
            uid: "u1",
            api_version: "apps/v1",
            field_path: "",
            type_: "Normal",
            reason,
            reporting_controller: "replicaset-controller",
            reporting_instance: "",
            message,
        }
    }

    #[test]
    fn ten_different_messages_of_one_reason_fold_into_a_combined_event() {
        let c = EventCorrelator::default();
        let now = Instant::now();
        let mut outcomes = Vec::new();
        for i in 0..12 {
            let msg = format!("Created pod: web-{i}");
            outcomes.push(c.correlate(
                &occurrence("web", "SuccessfulCreate", &msg),
                now,
                "t0",
                format!("web.{i}"),
            ));
        }
        for (i, o) in outcomes.iter().take(9).enumerate() {
            assert_eq!(
                *o,
                Outcome::Create {
                    name: format!("web.{i}"),
                    message: format!("Created pod: web-{i}"),
                    combined: false
                }
            );
        }
        assert_eq!(
            outcomes[9],
            Outcome::Create {
                name: "web.9".into(),
                message: "(combined from similar events): Created pod: web-9".into(),
                combined: true
            }
        );
        assert_eq!(
            outcomes[11],
            Outcome::Update {
                name: "web.9".into(),
                count: 3,
                message: "(combined from similar events): Created pod: web-11".into(),
                first_timestamp: "t0".into(),
                combined: true
            }
        );
    }

    /// Whether correlating `o` writes a new Event.
    fn creates(
        c: &EventCorrelator,
        o: &Occurrence<'_>,
        now: Instant,
        at: &str,
        name: &str,
    ) -> bool {
        matches!(c.correlate(o, now, at, name.into()), Outcome::Create { .. })
    }

    #[test]
    fn the_same_event_again_counts_up_and_another_reason_is_its_own() {
        let c = EventCorrelator::default();
        let now = Instant::now();
        let o = occurrence("web", "FailedCreate", "quota exceeded");
        assert!(creates(&c, &o, now, "t0", "a"));
        assert_eq!(
            c.correlate(&o, now, "t1", "b".into()),
            Outcome::Update {
                name: "a".into(),
                count: 2,
                message: "quota exceeded".into(),
                first_timestamp: "t0".into(),
                combined: false
            }
        );
        let other = occurrence("web", "SuccessfulDelete", "Deleted pod: web-1");
        assert!(creates(&c, &other, now, "t2", "c"));
    }

    #[test]
    fn a_source_and_object_get_25_writes_then_one_every_five_minutes() {
        let c = EventCorrelator::default();
        let now = Instant::now();
        let written = (0..40)
            .filter(|i| {
                let msg = format!("Created pod: web-{i}");
                c.correlate(
                    &occurrence("web", "SuccessfulCreate", &msg),
                    now,
                    "t",
                    format!("web.{i}"),
                ) != Outcome::Skip
            })
            .count();
        assert_eq!(written, 25);
        let later = now + Duration::from_secs(300);
        let o = occurrence("web", "SuccessfulCreate", "Created pod: web-40");
        assert!(matches!(
            c.correlate(&o, later, "t", "x".into()),
            Outcome::Update { count: 32, .. }
        ));
        assert_eq!(c.correlate(&o, later, "t", "y".into()), Outcome::Skip);
        // Another object has its own budget.
        let o = occurrence("api", "SuccessfulCreate", "Created pod: api-1");
        assert!(creates(&c, &o, later, "t", "z"));
    }

    #[test]
    fn the_caches_stay_bounded() {
        let c = EventCorrelator::default();
        let now = Instant::now();
        for i in 0..3 * MAX_ENTRIES {
            let name = format!("pod-{i}");
            c.correlate(
                &occurrence(&name, "Started", "Started container c"),
                now,
                "t",
                name.clone(),
            );
        }
        let g = c.0.lock().expect("lock");
        assert!(g.observed.new.len() + g.observed.old.len() <= 2 * MAX_ENTRIES);
        assert!(g.spam.new.len() + g.spam.old.len() <= 2 * MAX_ENTRIES);
    }
}
