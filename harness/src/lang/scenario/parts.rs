//! The hand-written parts of the scenario's JSON Schema, as `raw` names them.
//!
//! What serde leaves to `validate` (a field read from the YAML tree, a rule
//! between keys) is described beside the reader that reads it. `raw` names
//! no reader: each such field's `schema_with` is a placeholder below that asks
//! the generator for its [`Part`], and each such rule's `transform` marks the
//! schema with its [`Shape`]; `scenario::schema` puts a [`Filler`] in the
//! generator that answers both from the readers' table.

use schemars::{Schema, SchemaGenerator};

/// The generator's hook that fills in the hand-written parts (one per
/// generator, among its transforms).
#[derive(Clone)]
pub struct Filler {
    /// The schema of a part, made with the generator.
    pub part: fn(Part, &mut SchemaGenerator) -> Schema,
    /// Adds a rule's keys to the schema it marks.
    pub shape: fn(Shape, &mut Schema),
}

/// The key that marks a schema with its [`Shape`] until the [`Filler`] replaces it.
const SHAPE_KEY: &str = "x-faultline-shape";

impl schemars::transform::Transform for Filler {
    /// Run on the whole document once it is made: each marked schema gets its
    /// shape's keys where its marker stands.
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(object) = schema.as_object_mut() {
            for value in object.values_mut() {
                self.splice(value);
            }
            self.splice_here(object);
        }
    }
}

impl Filler {
    fn splice(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(object) => {
                for inner in object.values_mut() {
                    self.splice(inner);
                }
                self.splice_here(object);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|i| self.splice(i)),
            serde_json::Value::Null
            | serde_json::Value::Bool(_)
            | serde_json::Value::Number(_)
            | serde_json::Value::String(_) => {}
        }
    }

    fn splice_here(&self, object: &mut serde_json::Map<String, serde_json::Value>) {
        let Some(serde_json::Value::String(name)) = object.get(SHAPE_KEY) else {
            return;
        };
        let shape = Shape::ALL
            .iter()
            .copied()
            .find(|s| s.name() == name)
            .expect("only `shape` marks a schema");
        let mut keys = Schema::from(serde_json::Map::new());
        (self.shape)(shape, &mut keys);
        let keys = keys.to_value();
        let serde_json::Value::Object(keys) = keys else {
            unreachable!("a shape adds keys to a mapping")
        };
        let mut keys = Some(keys);
        for (key, value) in std::mem::take(object) {
            if key == SHAPE_KEY {
                object.extend(keys.take().into_iter().flatten());
            } else {
                object.insert(key, value);
            }
        }
    }
}

fn fill(generator: &mut SchemaGenerator, part: Part) -> Schema {
    let fill = generator
        .settings()
        .transforms
        .iter()
        .find_map(|t| t.as_ref().downcast_ref::<Filler>())
        .map(|f| f.part)
        .expect("the scenario schema's generator holds a `Filler` (scenario::schema)");
    fill(part, generator)
}

/// Each part: a variant of [`Part`] and its placeholder.
macro_rules! parts {
    ($($function:ident => $variant:ident,)+) => {
        /// A hand-written part of the schema, by the field it describes.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Part {
            $($variant,)+
        }

        $(
            /// A placeholder that a `schema_with` names.
            pub fn $function(generator: &mut SchemaGenerator) -> Schema {
                fill(generator, Part::$variant)
            }
        )+
    };
}

/// Each shape: a variant of [`Shape`], its name, and its marker.
macro_rules! shapes {
    ($($function:ident => $variant:ident,)+) => {
        /// A rule between the keys of a mapping, by the mapping it holds in.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Shape {
            $($variant,)+
        }

        impl Shape {
            pub const ALL: &[Shape] = &[$(Shape::$variant,)+];

            pub fn name(self) -> &'static str {
                match self {
                    $(Shape::$variant => stringify!($function),)+
                }
            }
        }

        $(
            /// A marker that a `transform` names.
            pub fn $function(schema: &mut Schema) {
                schema.insert(SHAPE_KEY.into(), Shape::$variant.name().into());
            }
        )+
    };
}

parts! {
    absent_schema => Absent,
    bound_schema => Bound,
    bugs_schema => Bugs,
    chaos_faults_schema => ChaosFaults,
    chaos_params_schema => ChaosParams,
    chaos_schema => Chaos,
    delay_schema => Delay,
    event_kind_schema => EventKind,
    except_schema => Except,
    expect_schema => Expect,
    heal_schema => Heal,
    node_name_schema => NodeName,
    nodes_schema => Nodes,
    observed_list_schema => ObservedList,
    observed_schema => Observed,
    op_schema => Op,
    outcomes_schema => Outcomes,
    params_schema => Params,
    point_action_schema => PointAction,
    restart_exited_schema => RestartExited,
    schedule_ref_schema => ScheduleRef,
    scheduled_faults_schema => ScheduledFaults,
    scheduled_ops_schema => ScheduledOps,
    since_schema => Since,
    stall_schema => Stall,
    steps_schema => Steps,
    workload_ops_schema => WorkloadOps,
    workload_schema => Workload,
}

shapes! {
    await_shape => Await,
    check_shape => Check,
    observed_shape => Observed,
    partition_shape => Partition,
    release_shape => Release,
    top_level_shape => TopLevel,
    trail_match_shape => TrailMatch,
}
