//! Events (upstream `pkg/registry/core/event`, printer `printEvent`): stored once as core/v1,
//! served as events.k8s.io/v1 too (`registry/events.rs` converts), so both groups print and
//! select the same way.

use serde_json::{Value, json};

use crate::apiserver::registry::strategy::{Strategy, column, field_at, kind_type, str_at};
use crate::apiserver::util::age;

pub(crate) struct Event;
pub(crate) struct EventsV1Event;

fn event_cells(e: &Value) -> Vec<Value> {
    let last = [
        str_at(e, "/lastTimestamp"),
        str_at(e, "/eventTime"),
        str_at(e, "/metadata/creationTimestamp"),
    ]
    .into_iter()
    .find(|x| !x.is_empty())
    .map(|x| age(Some(x)))
    .unwrap_or_else(|| "<unknown>".into());
    let first = [str_at(e, "/firstTimestamp"), str_at(e, "/eventTime")]
        .into_iter()
        .find(|x| !x.is_empty())
        .map(|x| age(Some(x)));
    let obj = format!(
        "{}/{}",
        str_at(e, "/involvedObject/kind").to_lowercase(),
        str_at(e, "/involvedObject/name")
    );
    let source = if str_at(e, "/source/component").is_empty() {
        str_at(e, "/reportingComponent")
    } else {
        str_at(e, "/source/component")
    };
    vec![
        json!(last),
        json!(str_at(e, "/type")),
        json!(str_at(e, "/reason")),
        json!(obj),
        json!(str_at(e, "/involvedObject/fieldPath")),
        json!(source),
        json!(str_at(e, "/message").trim()),
        json!(first.unwrap_or_else(|| "<unknown>".into())),
        json!(e.get("count").and_then(Value::as_i64).unwrap_or(1)),
        json!(str_at(e, "/metadata/name")),
    ]
}

fn event_columns() -> Vec<Value> {
    vec![
        column(
            "Last Seen",
            "string",
            0,
            "The last time the event was seen.",
        ),
        column(
            "Type",
            "string",
            0,
            "Type of this event (Normal, Warning), new types could be added in the future.",
        ),
        column(
            "Reason",
            "string",
            0,
            "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
        ),
        column(
            "Object",
            "string",
            0,
            "The object that this event is about.",
        ),
        column(
            "Subobject",
            "string",
            1,
            "The subobject (field path) that this event is about.",
        ),
        column("Source", "string", 1, "The component reporting this event."),
        column(
            "Message",
            "string",
            0,
            "A human-readable description of the status of this operation.",
        ),
        column(
            "First Seen",
            "string",
            1,
            "The first time the event was seen.",
        ),
        column(
            "Count",
            "integer",
            1,
            "The number of times this event has occurred.",
        ),
        column(
            "Name",
            "string",
            1,
            "Name must be unique within a namespace.",
        ),
    ]
}

fn event_field(field: &str, o: &Value) -> Option<Option<String>> {
    Some(match field {
        f if f.starts_with("involvedObject.") => {
            let sub = f.trim_start_matches("involvedObject.");
            field_at(o, &format!("/involvedObject/{sub}"))
        }
        "reason" => field_at(o, "/reason"),
        "type" => field_at(o, "/type"),
        "reportingComponent" => field_at(o, "/reportingComponent"),
        "source" => field_at(o, "/source/component"),
        _ => return None,
    })
}

impl Strategy for Event {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "Event"
    }
    kind_type!(k8s_openapi::api::core::v1::Event);
    fn columns(&self) -> Vec<Value> {
        event_columns()
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        event_cells(o)
    }
    fn field(&self, field: &str, o: &Value) -> Option<Option<String>> {
        event_field(field, o)
    }
}

impl Strategy for EventsV1Event {
    fn group(&self) -> &'static str {
        "events.k8s.io"
    }
    fn kind(&self) -> &'static str {
        "Event"
    }
    kind_type!(k8s_openapi::api::events::v1::Event);
    fn columns(&self) -> Vec<Value> {
        event_columns()
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        event_cells(o)
    }
    fn field(&self, field: &str, o: &Value) -> Option<Option<String>> {
        event_field(field, o)
    }
}
