//! Where a typed pod differs from the tree the plugin before it left, found by serializing
//! the pod *against* that tree: parts equal to it are walked but never built, and only what
//! differs becomes a `Value`. Serializing the whole pod after each of the five mutating
//! plugins and diffing the two trees had cost about a seventh of the server's CPU per pod
//! create. What the walk does not follow falls back to `changes::diff_values`, and the tests
//! hold the two to the same answer.

use serde::Serialize;
use serde::ser::{self, Error as _};
use serde_json::{Map, Value};

use crate::apiserver::admission::changes::{Patch, diff_values, path_order, push_index, push_key};

/// Where `new` differs from `seen`, as `diff_values` finds it, in the order of `path_order`.
pub(crate) fn diff_typed<T: Serialize + ?Sized>(seen: &Value, new: &T) -> Vec<Patch> {
    let mut out = Vec::new();
    let walked = new.serialize(Against {
        seen,
        path: &mut String::new(),
        out: &mut out,
    });
    if walked.is_err() {
        // What the walk does not follow (a length hint that lied, a key removed from a
        // map): compare the whole tree instead.
        out.clear();
        let tree = serde_json::to_value(new).unwrap_or(Value::Null);
        diff_values(seen, &tree, &mut String::new(), &mut out);
    }
    out.sort_by(|a, b| path_order(&a.path, &b.path));
    out
}

use serde_json::value::Serializer as Tree;
type Error = serde_json::Error;

/// The serializer of `diff_typed`: it writes nothing, and records each place where what it is
/// given differs from `seen`.
struct Against<'a> {
    seen: &'a Value,
    path: &'a mut String,
    out: &'a mut Vec<Patch>,
}

impl Against<'_> {
    /// A value built whole (a scalar, or what the walk does not follow): compared as trees.
    fn tree(self, v: Value) -> Result<(), Error> {
        diff_values(self.seen, &v, self.path, self.out);
        Ok(())
    }
}

/// `Serializer` methods for scalars: each builds its value with serde_json's own serializer.
macro_rules! scalars {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(
            fn $method(self, v: $ty) -> Result<(), Error> {
                let v = Tree.$method(v)?;
                self.tree(v)
            }
        )*
    };
}

impl<'a> ser::Serializer for Against<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = SeqAgainst<'a>;
    type SerializeTuple = Whole<'a, <Tree as ser::Serializer>::SerializeTuple>;
    type SerializeTupleStruct = Whole<'a, <Tree as ser::Serializer>::SerializeTupleStruct>;
    type SerializeTupleVariant = Whole<'a, <Tree as ser::Serializer>::SerializeTupleVariant>;
    type SerializeMap = MapAgainst<'a>;
    type SerializeStruct = StructAgainst<'a>;
    type SerializeStructVariant = Whole<'a, <Tree as ser::Serializer>::SerializeStructVariant>;

    // A scalar is built as serde_json builds it, then compared.
    scalars! {
        serialize_bool: bool, serialize_char: char,
        serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_u128: u128, serialize_f32: f32, serialize_f64: f64,
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        // Most of a pod is strings: an equal one is not copied.
        if self.seen.as_str() == Some(v) {
            return Ok(());
        }
        self.tree(Value::String(v.to_owned()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        let v = Tree.serialize_bytes(v)?;
        self.tree(v)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.tree(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.tree(Value::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.tree(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        let v = Tree.serialize_newtype_variant(name, index, variant, v)?;
        self.tree(v)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqAgainst<'a>, Error> {
        Ok(match (self.seen, len) {
            (Value::Array(seen), Some(n)) if n == seen.len() => SeqAgainst::Each {
                seen,
                next: 0,
                path: self.path,
                out: self.out,
            },
            // A list that grew, shrank or is new: small lists (tolerations, volumes) that are
            // cheaper to build whole than to follow.
            _ => SeqAgainst::Whole(Whole {
                inner: Tree.serialize_seq(len)?,
                at: self,
            }),
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, Error> {
        Ok(Whole {
            inner: Tree.serialize_tuple(len)?,
            at: self,
        })
    }
    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Ok(Whole {
            inner: Tree.serialize_tuple_struct(name, len)?,
            at: self,
        })
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Ok(Whole {
            inner: Tree.serialize_tuple_variant(name, index, variant, len)?,
            at: self,
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<MapAgainst<'a>, Error> {
        Ok(match self.seen {
            Value::Object(seen) => MapAgainst::Keys(Keys::new(seen, self.path, self.out)),
            _ => MapAgainst::Whole(Whole {
                inner: Tree.serialize_map(len)?,
                at: self,
            }),
        })
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<StructAgainst<'a>, Error> {
        Ok(match self.seen {
            Value::Object(seen) => StructAgainst::Keys(Keys::new(seen, self.path, self.out)),
            _ => StructAgainst::Whole(Whole {
                inner: Tree.serialize_struct(name, len)?,
                at: self,
            }),
        })
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Ok(Whole {
            inner: Tree.serialize_struct_variant(name, index, variant, len)?,
            at: self,
        })
    }
}

/// A compound value built as a tree by serde_json's own serializer, then compared whole.
struct Whole<'a, S> {
    inner: S,
    at: Against<'a>,
}

/// `Whole`'s compound traits: each passes its elements on to serde_json's tree serializer and
/// compares the tree at the end. They differ only in the trait and its element method.
macro_rules! whole {
    ($tr:ident, $method:ident $(, $key:ident: $kty:ty)?) => {
        impl<S: ser::$tr<Ok = Value, Error = Error>> ser::$tr for Whole<'_, S> {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(
                &mut self,
                $($key: $kty,)?
                v: &T,
            ) -> Result<(), Error> {
                self.inner.$method($($key,)? v)
            }
            fn end(self) -> Result<(), Error> {
                let v = self.inner.end()?;
                self.at.tree(v)
            }
        }
    };
}

whole!(SerializeSeq, serialize_element);
whole!(SerializeTuple, serialize_element);
whole!(SerializeTupleStruct, serialize_field);
whole!(SerializeTupleVariant, serialize_field);
whole!(SerializeStruct, serialize_field, key: &'static str);
whole!(SerializeStructVariant, serialize_field, key: &'static str);

impl<S: ser::SerializeMap<Ok = Value, Error = Error>> ser::SerializeMap for Whole<'_, S> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), Error> {
        self.inner.serialize_key(k)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.inner.serialize_value(v)
    }
    fn end(self) -> Result<(), Error> {
        let v = self.inner.end()?;
        self.at.tree(v)
    }
}

/// A list against one of the same length, element by element.
enum SeqAgainst<'a> {
    Each {
        seen: &'a [Value],
        next: usize,
        path: &'a mut String,
        out: &'a mut Vec<Patch>,
    },
    Whole(Whole<'a, <Tree as ser::Serializer>::SerializeSeq>),
}

impl ser::SerializeSeq for SeqAgainst<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        match self {
            SeqAgainst::Each {
                seen,
                next,
                path,
                out,
            } => {
                let Some(seen) = seen.get(*next) else {
                    return Err(Error::custom("more elements than the length given"));
                };
                let len = path.len();
                push_index(path, *next);
                *next += 1;
                let res = v.serialize(Against { seen, path, out });
                path.truncate(len);
                res
            }
            SeqAgainst::Whole(w) => w.serialize_element(v),
        }
    }
    fn end(self) -> Result<(), Error> {
        match self {
            SeqAgainst::Each { seen, next, .. } if next != seen.len() => {
                Err(Error::custom("fewer elements than the length given"))
            }
            SeqAgainst::Each { .. } => Ok(()),
            SeqAgainst::Whole(w) => ser::SerializeSeq::end(w),
        }
    }
}

/// The keys of an object against the object before: each key's value is walked against the
/// one before, a new key's value is built, and a key that is gone is found by counting.
struct Keys<'a> {
    seen: &'a Map<String, Value>,
    matched: usize,
    /// A map's key, written into `path` by `serialize_key`, and what it held before.
    at: Option<(usize, Option<&'a Value>)>,
    path: &'a mut String,
    out: &'a mut Vec<Patch>,
}

impl<'a> Keys<'a> {
    fn new(seen: &'a Map<String, Value>, path: &'a mut String, out: &'a mut Vec<Patch>) -> Self {
        Keys {
            seen,
            matched: 0,
            at: None,
            path,
            out,
        }
    }

    /// `v` at the key just pushed onto `path`, which held `before`.
    fn value<T: Serialize + ?Sized>(
        &mut self,
        before: Option<&'a Value>,
        v: &T,
    ) -> Result<(), Error> {
        match before {
            Some(seen) => {
                self.matched += 1;
                v.serialize(Against {
                    seen,
                    path: self.path,
                    out: self.out,
                })
            }
            None => {
                let new = serde_json::to_value(v)?;
                self.out.push(Patch {
                    path: self.path.clone(),
                    new: Some(new),
                });
                Ok(())
            }
        }
    }

    fn end(self) -> Result<(), Error> {
        if self.matched == self.seen.len() {
            return Ok(());
        }
        // Rare (no admission plugin removes a field): the caller compares whole trees.
        Err(Error::custom("a key was removed"))
    }
}

enum MapAgainst<'a> {
    Keys(Keys<'a>),
    Whole(Whole<'a, <Tree as ser::Serializer>::SerializeMap>),
}

impl ser::SerializeMap for MapAgainst<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), Error> {
        match self {
            MapAgainst::Keys(keys) => {
                let Value::String(k) = serde_json::to_value(k)? else {
                    return Err(Error::custom("a map key that is not a string"));
                };
                let len = keys.path.len();
                push_key(keys.path, &k);
                keys.at = Some((len, keys.seen.get(&k)));
                Ok(())
            }
            MapAgainst::Whole(w) => w.serialize_key(k),
        }
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        match self {
            MapAgainst::Keys(keys) => {
                let Some((len, before)) = keys.at.take() else {
                    return Err(Error::custom("a map value without its key"));
                };
                let res = keys.value(before, v);
                keys.path.truncate(len);
                res
            }
            MapAgainst::Whole(w) => w.serialize_value(v),
        }
    }
    fn end(self) -> Result<(), Error> {
        match self {
            MapAgainst::Keys(keys) => keys.end(),
            MapAgainst::Whole(w) => ser::SerializeMap::end(w),
        }
    }
}

enum StructAgainst<'a> {
    Keys(Keys<'a>),
    Whole(Whole<'a, <Tree as ser::Serializer>::SerializeStruct>),
}

impl ser::SerializeStruct for StructAgainst<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        match self {
            StructAgainst::Keys(keys) => {
                let len = keys.path.len();
                push_key(keys.path, key);
                let res = keys.value(keys.seen.get(key), v);
                keys.path.truncate(len);
                res
            }
            StructAgainst::Whole(w) => w.serialize_field(key, v),
        }
    }
    fn end(self) -> Result<(), Error> {
        match self {
            StructAgainst::Keys(keys) => keys.end(),
            StructAgainst::Whole(w) => ser::SerializeStruct::end(w),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::admission::changes::{apply, describe};
    use k8s_openapi::api::core::v1::Pod;
    use serde::Deserialize;
    use serde_json::json;

    use crate::apiserver::registry::defaults;

    /// The walk's patches against the tree comparison's, and `apply` against a fresh tree.
    fn check(before: &Pod, after: &Pod) -> Vec<Patch> {
        let seen = serde_json::to_value(before).expect("tree");
        let tree = serde_json::to_value(after).expect("tree");
        let walked = diff_typed(&seen, after);
        let mut compared = Vec::new();
        diff_values(&seen, &tree, &mut String::new(), &mut compared);
        compared.sort_by(|a, b| path_order(&a.path, &b.path));
        assert_eq!(walked, compared);
        let mut applied = seen.clone();
        apply(&mut applied, walked.clone());
        assert_eq!(applied, tree);
        walked
    }

    fn pod(v: Value) -> Pod {
        serde_json::from_value(v).expect("pod")
    }

    #[test]
    fn the_walk_finds_what_the_tree_comparison_finds() {
        let base = pod(json!({
            "metadata": {"name": "app", "labels": {"app.kubernetes.io/name": "web", "t~x": "1"}},
            "spec": {
                "containers": [
                    {"name": "c", "image": "nginx",
                     "resources": {"requests": {"cpu": "100m"}},
                     "ports": [{"containerPort": 80}]},
                    {"name": "d", "image": "busybox"}
                ],
                "tolerations": [{"key": "a", "operator": "Exists"}],
                "nodeSelector": {"zone": "a"}
            }
        }));
        type Edit = Box<dyn Fn(&mut Pod)>;
        let edits: Vec<(&str, Edit)> = vec![
            ("nothing", Box::new(|_| {})),
            ("API defaults", Box::new(defaults::default_pod)),
            (
                "a label changed and one added",
                Box::new(|p| {
                    let l = p.metadata.labels.get_or_insert_with(Default::default);
                    l.insert("app.kubernetes.io/name".into(), "api".into());
                    l.insert("new/key".into(), "v".into());
                }),
            ),
            (
                "a label removed",
                Box::new(|p| {
                    p.metadata.labels.as_mut().map(|l| l.remove("t~x"));
                }),
            ),
            (
                "a list grown, one shrunk, one element changed",
                Box::new(|p| {
                    let s = p.spec.as_mut().expect("spec");
                    s.tolerations
                        .get_or_insert_with(Vec::new)
                        .push(Default::default());
                    s.containers[0].ports = Some(Vec::new());
                    s.containers[1].image = Some("busybox:1.36".into());
                }),
            ),
            (
                "a list replaced, a map emptied",
                Box::new(|p| {
                    let s = p.spec.as_mut().expect("spec");
                    s.containers.reverse();
                    s.node_selector = Some(Default::default());
                }),
            ),
            (
                "a quantity and a number",
                Box::new(|p| {
                    let s = p.spec.as_mut().expect("spec");
                    s.priority = Some(-3);
                    let r = s.containers[0].resources.as_mut().expect("resources");
                    r.requests.as_mut().expect("requests").insert(
                        "cpu".into(),
                        k8s_openapi::apimachinery::pkg::api::resource::Quantity("1".into()),
                    );
                }),
            ),
        ];
        for (what, edit) in edits {
            let mut after = base.clone();
            edit(&mut after);
            let patches = check(&base, &after);
            assert_eq!(patches.is_empty(), what == "nothing", "{what}: {patches:?}");
        }
    }

    #[test]
    fn a_removed_key_is_recorded_with_no_value_after() {
        let before = pod(json!({"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}}}));
        let mut after = before.clone();
        after.metadata.labels.as_mut().map(|l| l.remove("x"));
        let patches = check(&before, &after);
        let seen = serde_json::to_value(&before).expect("tree");
        let (paths, changes) = describe(&seen, &patches);
        assert_eq!(paths, ["/metadata/labels/x"]);
        assert_eq!(changes[0].old.as_deref(), Some("1"));
        assert_eq!(changes[0].new, None);
    }

    /// Every pod of the scenarios (affinities, spreads, probes, ports, volumes), through the
    /// decode-time defaults and DefaultTolerationSeconds: the walk finds what the trees do.
    #[test]
    fn scenario_pods_walk_as_their_trees_compare() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        let mut pods = 0;
        for entry in std::fs::read_dir(&dir).expect("scenarios") {
            let path = entry.expect("entry").path();
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            for doc in serde_yaml::Deserializer::from_str(&text) {
                let Ok(v) = Value::deserialize(doc) else {
                    continue;
                };
                let items = match v.get("items").and_then(Value::as_array) {
                    Some(items) => items.clone(),
                    None => vec![v],
                };
                for item in items.into_iter().filter(|i| i["kind"] == "Pod") {
                    let before: Pod = serde_json::from_value(item).expect("a pod");
                    let mut after = before.clone();
                    defaults::default_pod(&mut after);
                    crate::apiserver::admission::plugins::default_toleration_seconds(&mut after)
                        .expect("no rejection");
                    assert!(!check(&before, &after).is_empty(), "{}", path.display());
                    pods += 1;
                }
            }
        }
        assert!(pods > 20, "{pods} pods");
    }
}
