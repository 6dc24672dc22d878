package traces

// The payload of every frame is one msgpack array whose elements are the
// fields in a fixed order (docs/trace-format.md lists them). No maps are
// encoded, so the bytes are a function of the values: encoding a record
// twice gives the same bytes. Readers ignore elements past the ones they
// know, which is how a version adds fields.
//
// This file is the schema: how many fields each array has in each
// version. encode.go writes payloads, decode.go reads them with the
// msgpack reader of msgpack.go.

const (
	headerFields = 8  // written; version 1 wrote 7 (no faults)
	recordFields = 19 // written; version 1 wrote 13 (no fault, side, oversize), version 2 16 (no end, batch), version 3 at first 18 (no revision)

	headerFieldsV1 = 7  // the least a header has
	recordFieldsV1 = 13 // the least a record has

	httpFields     = 5
	sseFields      = 7  // written; versions 1 and 2 wrote 6 (no no_data)
	rpcFields      = 12 // written; until version 3 gained result_type, 11
	scheduleFields = 3
	faultFields    = 7 // written; version 2 wrote 4 (no verb, delay, status)

	// The least each has.
	sseFieldsV1   = 6
	rpcFieldsV1   = 11
	faultFieldsV2 = 4
	// A record with fewer fields than this is of version 1 or 2: upgrade
	// fills its typed fields from its text.
	recordFieldsV3 = 18
	targetFields   = 14
)
