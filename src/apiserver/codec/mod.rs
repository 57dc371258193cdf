//! Codecs: request bodies to objects (JSON, YAML, protobuf) and responses to bytes (JSON, YAML,
//! Table) — upstream's `runtime/serializer` and content negotiation.

pub mod body;
pub mod decode;
pub(crate) mod decode_error;
pub mod proto;
pub mod proto_objects;
pub(crate) mod proto_schema;
pub mod yaml_parse;
