//! Field numbers and enum values of the Perfetto trace protos this writer emits, from
//! `protos/perfetto/trace/` (Perfetto v52; all of them stable since v30). Checked against the
//! descriptor of the PyPI package `perfetto==0.59.1` by `scripts/strict-proto-check.sh`.

/// `Trace.packet` (repeated TracePacket).
pub(crate) const TRACE_PACKET: u32 = 1;

/// `TracePacket.timestamp` (uint64, ns in the default trace clock).
pub(crate) const PACKET_TIMESTAMP: u32 = 8;
/// `TracePacket.trusted_packet_sequence_id` (uint32).
pub(crate) const PACKET_SEQUENCE_ID: u32 = 10;
/// `TracePacket.track_event` (TrackEvent).
pub(crate) const PACKET_TRACK_EVENT: u32 = 11;
/// `TracePacket.interned_data` (InternedData).
pub(crate) const PACKET_INTERNED_DATA: u32 = 12;
/// `TracePacket.sequence_flags` (uint32, SequenceFlags bits).
pub(crate) const PACKET_SEQUENCE_FLAGS: u32 = 13;
/// `TracePacket.track_descriptor` (TrackDescriptor).
pub(crate) const PACKET_TRACK_DESCRIPTOR: u32 = 60;

/// `TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED`.
pub(crate) const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
/// `TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE`.
pub(crate) const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;

/// `TrackDescriptor.uuid` (uint64).
pub(crate) const TRACK_UUID: u32 = 1;
/// `TrackDescriptor.name` (string).
pub(crate) const TRACK_NAME: u32 = 2;
/// `TrackDescriptor.parent_uuid` (uint64).
pub(crate) const TRACK_PARENT_UUID: u32 = 5;
/// `TrackDescriptor.counter` (CounterDescriptor).
pub(crate) const TRACK_COUNTER: u32 = 8;
/// `TrackDescriptor.child_ordering` (ChildTracksOrdering).
pub(crate) const TRACK_CHILD_ORDERING: u32 = 11;
/// `TrackDescriptor.sibling_order_rank` (int32).
pub(crate) const TRACK_SIBLING_ORDER_RANK: u32 = 12;
/// `TrackDescriptor.ChildTracksOrdering.EXPLICIT`: children sorted by `sibling_order_rank`.
pub(crate) const CHILD_ORDERING_EXPLICIT: u64 = 3;

/// `CounterDescriptor.unit_name` (string).
pub(crate) const COUNTER_UNIT_NAME: u32 = 6;

/// `TrackEvent.category_iids` (repeated uint64).
pub(crate) const EVENT_CATEGORY_IIDS: u32 = 3;
/// `TrackEvent.debug_annotations` (repeated DebugAnnotation).
pub(crate) const EVENT_DEBUG_ANNOTATIONS: u32 = 4;
/// `TrackEvent.type` (TrackEvent.Type).
pub(crate) const EVENT_TYPE: u32 = 9;
/// `TrackEvent.name_iid` (uint64).
pub(crate) const EVENT_NAME_IID: u32 = 10;
/// `TrackEvent.track_uuid` (uint64).
pub(crate) const EVENT_TRACK_UUID: u32 = 11;
/// `TrackEvent.double_counter_value` (double).
pub(crate) const EVENT_DOUBLE_COUNTER_VALUE: u32 = 44;
/// `TrackEvent.flow_ids` (repeated **fixed64**).
pub(crate) const EVENT_FLOW_IDS: u32 = 47;
/// `TrackEvent.terminating_flow_ids` (repeated **fixed64**).
pub(crate) const EVENT_TERMINATING_FLOW_IDS: u32 = 48;

/// `TrackEvent.Type.TYPE_SLICE_BEGIN`.
pub(crate) const TYPE_SLICE_BEGIN: u64 = 1;
/// `TrackEvent.Type.TYPE_SLICE_END`.
pub(crate) const TYPE_SLICE_END: u64 = 2;
/// `TrackEvent.Type.TYPE_INSTANT`.
pub(crate) const TYPE_INSTANT: u64 = 3;
/// `TrackEvent.Type.TYPE_COUNTER`.
pub(crate) const TYPE_COUNTER: u64 = 4;

/// `DebugAnnotation.name_iid` (uint64).
pub(crate) const ANNOTATION_NAME_IID: u32 = 1;
/// `DebugAnnotation.int_value` (int64).
pub(crate) const ANNOTATION_INT_VALUE: u32 = 4;

/// `InternedData.event_categories` (repeated EventCategory).
pub(crate) const INTERNED_EVENT_CATEGORIES: u32 = 1;
/// `InternedData.event_names` (repeated EventName).
pub(crate) const INTERNED_EVENT_NAMES: u32 = 2;
/// `InternedData.debug_annotation_names` (repeated DebugAnnotationName).
pub(crate) const INTERNED_DEBUG_ANNOTATION_NAMES: u32 = 3;
/// `EventCategory.iid`, `EventName.iid`, `DebugAnnotationName.iid` (uint64).
pub(crate) const INTERNED_IID: u32 = 1;
/// `EventCategory.name`, `EventName.name`, `DebugAnnotationName.name` (string).
pub(crate) const INTERNED_NAME: u32 = 2;
