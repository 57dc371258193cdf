//! `/openapi/v2`: kubectl 1.27/1.28 validate `create -f` against it (as gnostic protobuf) and
//! look there for the `fieldValidation` parameter on PATCH operations. Until a protobuf
//! document is served, those two versions need `--validate=false` (see the report).

use super::api::Reply;
use super::status::ApiError;

pub fn serve(_accept: Option<&str>) -> Result<Reply, ApiError> {
    Err(ApiError::no_route())
}
