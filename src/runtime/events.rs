//! The dry-run's event stream. Names reuse the seeds' audit names where they exist
//! (`StageInitFailed`, `StageAssertOutcome`, `StageExited`); events carry a logical sequence
//! number, never wall time, so the same run always gives the same stream.

use serde_json::{Map, Value};

/// The version of the event stream, on every line: it moves when an event's meaning or a
/// field's encoding changes (adding an event or a field does not move it).
pub const VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub seq: u64,
    pub name: &'static str,
    /// The payload, in a fixed key order.
    pub data: Map<String, Value>,
}

impl Event {
    /// The JSON Lines form: `{"version":…,"seq":…,"event":…,…payload}`.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("version".into(), VERSION.into());
        out.insert("seq".into(), self.seq.into());
        out.insert("event".into(), self.name.into());
        out.extend(self.data.clone());
        Value::Object(out)
    }

    pub fn str(&self, key: &str) -> &str {
        self.data.get(key).and_then(Value::as_str).unwrap_or("")
    }

    pub fn num(&self, key: &str) -> u64 {
        self.data.get(key).and_then(Value::as_u64).unwrap_or(0)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub events: Vec<Event>,
    /// The stage being executed: every event emitted meanwhile carries it as `stage`, so a
    /// machine's stream can be read event by event.
    pub scope: Option<String>,
}

impl Trace {
    /// Appends `name` with `data` (an object; anything else is stored under `value`).
    pub fn emit(&mut self, name: &'static str, data: Value) {
        let data = match data {
            Value::Object(map) => map,
            other => Map::from_iter([("value".to_string(), other)]),
        };
        let data = match &self.scope {
            Some(stage) if !data.contains_key("stage") => {
                let mut scoped = Map::from_iter([("stage".to_string(), Value::from(stage.as_str()))]);
                scoped.extend(data);
                scoped
            }
            _ => data,
        };
        let seq = self.events.len() as u64 + 1;
        self.events.push(Event { seq, name, data });
    }

    pub fn to_json_lines(&self) -> String {
        self.events.iter().map(|e| e.to_json().to_string() + "\n").collect()
    }
}
