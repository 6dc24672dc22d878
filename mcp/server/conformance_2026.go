package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// Names of the fixtures the official conformance suite's scenarios for
// the 2026-07-28 requirements call beyond the tasks ones (0.2.0,
// `--requirements 2026-07-28`).
const (
	ToolImageContent     = "test_image_content"
	ToolAudioContent     = "test_audio_content"
	ToolEmbeddedResource = "test_embedded_resource"
	ToolMixedContent     = "test_multiple_content_types"
	ToolJSONSchema2020   = "json_schema_2020_12_tool"

	ToolInputElicitation  = "test_input_required_result_elicitation"
	ToolInputSampling     = "test_input_required_result_sampling"
	ToolInputListRoots    = "test_input_required_result_list_roots"
	ToolInputRequestState = "test_input_required_result_request_state"
	ToolInputMultiple     = "test_input_required_result_multiple_inputs"
	ToolInputMultiRound   = "test_input_required_result_multi_round"
	ToolInputTampered     = "test_input_required_result_tampered_state"
	ToolInputCapabilities = "test_input_required_result_capabilities"

	ToolMissingCapability  = "test_missing_capability"
	ToolStreamingElicit    = "test_streaming_elicitation"
	ToolLoggingDiagnostics = "test_logging_tool"

	ToolCustomHeaders = "test_custom_headers"
)

// Fixture contents the scenarios check.
const (
	EmbeddedResourceText = "This is an embedded resource content."
	MixedContentText     = "Multiple content types test:"
	// StateOK is in the result of test_input_required_result_request_state:
	// the retry's requestState was verified.
	StateOK = "state-ok"
)

// JSONSchema2020 is json_schema_2020_12_tool's inputSchema, as the
// json-schema-2020-12 scenario lists it: $schema, $defs with an $anchor,
// a $ref, allOf/anyOf, if/then/else and additionalProperties false, all of
// which tools/list must carry unchanged (SEP-1613, SEP-2106).
const JSONSchema2020 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
	`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},` +
	`"phone":{"type":"string"},"email":{"type":"string"}},` +
	`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
	`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},` +
	`"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`

// CustomHeadersSchema is test_custom_headers' inputSchema: three
// arguments mirrored into Mcp-Param headers (region, a string; priority, an
// integer; verbose, a boolean) and one that is not (query), as the
// http-custom-header-server-validation scenario looks for them: a tool
// whose properties carry x-mcp-header, a string one among them (2026-07-28
// Streamable HTTP, "Custom Headers from Tool Parameters").
const CustomHeadersSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","description":"mirrored in Mcp-Param-Region","x-mcp-header":"Region"},` +
	`"priority":{"type":"integer","description":"mirrored in Mcp-Param-Priority","x-mcp-header":"Priority"},` +
	`"verbose":{"type":"boolean","description":"mirrored in Mcp-Param-Verbose","x-mcp-header":"Verbose"},` +
	`"query":{"type":"string","description":"not mirrored"}},"required":["region","query"]}`

// RevisionConformanceTools returns the fixtures the official conformance
// suite's scenarios for the 2026-07-28 requirements call, beside the tasks
// ones (TasksConformanceTools). They are served to 2026-07-28 requests
// only: the 2025-11-25 tool list stays as it was.
//
//	test_image_content, test_audio_content   one image (1x1 PNG) / audio (WAV) block
//	test_embedded_resource                   one embedded text resource
//	test_multiple_content_types              text, image and embedded JSON resource
//	json_schema_2020_12_tool                 inputSchema JSONSchema2020, answers "ok"
//	test_input_required_result_*             multi round-trip input (Tool.Input), see each
//	test_missing_capability                  needs sampling: -32021 when it is not declared
//	test_streaming_elicitation               asks by InputRequiredResult, never by a request on the stream
//	test_logging_tool                        answers; logs nothing (the era has no logging here)
//	test_custom_headers                      x-mcp-header arguments (CustomHeadersSchema); echoes the arguments
func RevisionConformanceTools() []*Tool {
	era := []mcp.Revision{mcp.Revision20260728}
	noArgs := json.RawMessage(`{"type":"object","properties":{}}`)
	tool := func(name, desc string, schema json.RawMessage, run RunFunc, in func(json.RawMessage, rev.InputResponses, *rev.ClientCapabilities) rev.InputRequests) *Tool {
		return &Tool{
			Tool:      mcp.Tool{Name: name, Description: desc, InputSchema: schema},
			Prepare:   func(json.RawMessage) (RunFunc, error) { return run, nil },
			Revisions: era,
			Input:     in,
		}
	}
	blocks := func(b ...mcp.ContentBlock) RunFunc {
		return func(context.Context, *Call) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: b}, nil
		}
	}
	answered := func(run func(rev.InputResponses) string) RunFunc {
		return func(_ context.Context, c *Call) (*mcp.CallToolResult, error) {
			return textResult(run(c.Answers())), nil
		}
	}
	askName := func(key, message string) func(json.RawMessage, rev.InputResponses, *rev.ClientCapabilities) rev.InputRequests {
		return asks(rev.InputRequests{key: elicitation(message, `{"name":{"type":"string"}}`, "name")})
	}
	greetUser := answered(func(a rev.InputResponses) string {
		name, _ := elicitedString(a["user_name"], "name")
		return "Hello, " + name + "!"
	})
	confirm := asks(rev.InputRequests{"confirm": elicitation("Please confirm", `{"ok":{"type":"boolean"}}`, "ok")})
	return []*Tool{
		tool(ToolImageContent, "Returns one image block, a 1x1 PNG (conformance fixture).", noArgs,
			blocks(mcp.ContentBlock{Type: mcp.ContentImage, Data: pngPixel(), MimeType: "image/png"}), nil),
		tool(ToolAudioContent, "Returns one audio block, a short silent WAV (conformance fixture).", noArgs,
			blocks(mcp.ContentBlock{Type: mcp.ContentAudio, Data: silentWAV(), MimeType: "audio/wav"}), nil),
		tool(ToolEmbeddedResource, "Returns one embedded text resource (conformance fixture).", noArgs,
			blocks(embedded("test://embedded-resource", "text/plain", EmbeddedResourceText)), nil),
		tool(ToolMixedContent, "Returns a text, an image and an embedded JSON resource (conformance fixture).", noArgs,
			blocks(mcp.TextBlock(MixedContentText), mcp.ContentBlock{Type: mcp.ContentImage, Data: pngPixel(), MimeType: "image/png"},
				embedded("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`)), nil),
		tool(ToolJSONSchema2020, "Tool with JSON Schema 2020-12 features; answers ok (conformance fixture).", json.RawMessage(JSONSchema2020),
			blocks(mcp.TextBlock("ok")), nil),

		tool(ToolInputElicitation, "Asks user_name by elicitation in a multi round-trip request, then greets (conformance fixture).", noArgs,
			greetUser, askName("user_name", "What is your name?")),
		tool(ToolInputSampling, "Asks the client's model a question in a multi round-trip request, then reports the answer (conformance fixture).", noArgs,
			answered(func(a rev.InputResponses) string { return "The model said: " + sampledText(a["capital_question"]) }),
			asks(rev.InputRequests{"capital_question": sampling("What is the capital of France?", 100)})),
		tool(ToolInputListRoots, "Asks the client's roots in a multi round-trip request, then lists them (conformance fixture).", noArgs,
			answered(func(a rev.InputResponses) string { return "Roots: " + strings.Join(rootURIs(a["client_roots"]), ", ") }),
			asks(rev.InputRequests{"client_roots": listRoots()})),
		tool(ToolInputRequestState, "Asks a confirmation with a sealed requestState; the result says state-ok once the echoed state verified (conformance fixture).", noArgs,
			answered(func(rev.InputResponses) string {
				return StateOK + ": the requestState verified and the confirmation arrived"
			}), confirm),
		tool(ToolInputMultiple, "Asks an elicitation, a sampling and roots/list at once, then reports all three (conformance fixture).", noArgs,
			answered(func(a rev.InputResponses) string {
				name, _ := elicitedString(a["user_name"], "name")
				return "Name: " + name + "; greeting: " + sampledText(a["greeting"]) + "; roots: " + strings.Join(rootURIs(a["client_roots"]), ", ")
			}),
			asks(rev.InputRequests{"user_name": elicitation("What is your name?", `{"name":{"type":"string"}}`, "name"),
				"greeting": sampling("Generate a greeting", 50), "client_roots": listRoots()})),
		tool(ToolInputMultiRound, "Asks in two rounds, step1 then step2, each with a new requestState (conformance fixture).", noArgs,
			answered(func(a rev.InputResponses) string {
				color, _ := elicitedString(a["step2"], "color")
				return "Both steps answered; favorite color: " + color
			}), multiRound),
		tool(ToolInputTampered, "Asks a confirmation with an HMAC-sealed requestState; a changed state is -32602 (conformance fixture).", noArgs,
			answered(func(rev.InputResponses) string { return "Confirmed under a verified requestState." }), confirm),
		tool(ToolInputCapabilities, "Asks only what the request's capabilities declare: elicitation, sampling, roots (conformance fixture).", noArgs,
			answered(func(a rev.InputResponses) string {
				return "Answered: " + strings.Join(slices.Sorted(maps.Keys(a)), ", ")
			}), declaredOnly),

		tool(ToolMissingCapability, "Needs a sampling answer: -32021 naming sampling when the request does not declare it (conformance fixture).", noArgs,
			answered(func(a rev.InputResponses) string { return "The model said: " + sampledText(a["sample"]) }),
			asks(rev.InputRequests{"sample": sampling("Say something.", 20)})),
		tool(ToolStreamingElicit, "Asks by elicitation through an InputRequiredResult, never by a request on the response stream (conformance fixture).", noArgs,
			greetUser, askName("user_name", "What is your name?")),
		tool(ToolLoggingDiagnostics, "Answers at once; sends no notifications/message (conformance fixture).", noArgs,
			blocks(mcp.TextBlock("Logging tool ran; no log level was requested, so nothing was logged.")), nil),
		{
			Tool: mcp.Tool{Name: ToolCustomHeaders, InputSchema: json.RawMessage(CustomHeadersSchema),
				Description: "Its region, priority and verbose arguments travel in Mcp-Param headers too, which the transport checks; echoes the arguments (conformance fixture)."},
			Prepare: func(args json.RawMessage) (RunFunc, error) {
				return blocks(mcp.TextBlock("arguments: " + string(args))), nil
			},
			Revisions: era,
		},
	}
}

// asks returns a Tool.Input that asks each of all, under its key, until
// the request carries an answer to it.
func asks(all rev.InputRequests) func(json.RawMessage, rev.InputResponses, *rev.ClientCapabilities) rev.InputRequests {
	return func(_ json.RawMessage, answers rev.InputResponses, _ *rev.ClientCapabilities) rev.InputRequests {
		open := rev.InputRequests{}
		for k, q := range all {
			if !validAnswer(answers[k]) {
				open[k] = q
			}
		}
		return open
	}
}

// validAnswer reports whether an answer is a JSON object, as every result
// an input request is answered with is (ElicitResult, CreateMessageResult,
// ListRootsResult); anything else is asked again (Multi Round-Trip
// Requests, "Error Handling").
func validAnswer(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return len(raw) > 0 && json.Unmarshal(raw, &m) == nil && m != nil
}

// multiRound asks step1 on the first round and step2, under a new
// requestState, once step1 is answered; step2 answered, it is done. Only
// the answers the last state asked count, so a round is known by them.
func multiRound(_ json.RawMessage, answers rev.InputResponses, _ *rev.ClientCapabilities) rev.InputRequests {
	switch {
	case validAnswer(answers["step2"]):
		return nil
	case validAnswer(answers["step1"]):
		return rev.InputRequests{"step2": elicitation("Step 2: What is your favorite color?", `{"color":{"type":"string"}}`, "color")}
	default:
		return rev.InputRequests{"step1": elicitation("Step 1: What is your name?", `{"name":{"type":"string"}}`, "name")}
	}
}

// declaredOnly asks one request of each kind the request's capabilities
// declare and none of the others (Multi Round-Trip Requests, "Server
// Requirements" 7).
func declaredOnly(_ json.RawMessage, answers rev.InputResponses, caps *rev.ClientCapabilities) rev.InputRequests {
	open := rev.InputRequests{}
	for _, q := range []struct {
		key      string
		declared bool
		req      rev.InputRequest
	}{
		{"user_name", caps.HasElicitation(), elicitation("What is your name?", `{"name":{"type":"string"}}`, "name")},
		{"capital_question", caps.HasSampling(), sampling("What is the capital of France?", 100)},
		{"client_roots", caps.HasRoots(), listRoots()},
	} {
		if q.declared && !validAnswer(answers[q.key]) {
			open[q.key] = q.req
		}
	}
	return open
}

// sampling returns a sampling/createMessage request asking text of the
// client's model.
func sampling(text string, maxTokens int) rev.InputRequest {
	params, _ := json.Marshal(map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": map[string]string{"type": "text", "text": text}}},
		"maxTokens": maxTokens,
	})
	return rev.InputRequest{Method: rev.MethodSamplingCreateMessage, Params: params}
}

func listRoots() rev.InputRequest {
	return rev.InputRequest{Method: rev.MethodRootsList, Params: json.RawMessage(`{}`)}
}

// sampledText is the text of a CreateMessageResult's content (one block),
// or "".
func sampledText(answer json.RawMessage) string {
	var r struct {
		Content struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(answer, &r)
	return r.Content.Text
}

// rootURIs are the uris of a ListRootsResult's roots.
func rootURIs(answer json.RawMessage) []string {
	var r struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	_ = json.Unmarshal(answer, &r)
	uris := make([]string, 0, len(r.Roots))
	for _, root := range r.Roots {
		uris = append(uris, root.URI)
	}
	return uris
}

// embedded returns an embedded-resource block with text contents.
func embedded(uri, mimeType, text string) mcp.ContentBlock {
	res, _ := json.Marshal(map[string]string{"uri": uri, "mimeType": mimeType, "text": text})
	return mcp.ContentBlock{Type: mcp.ContentResource, Resource: res}
}

// pngPixel is a 1x1 red PNG in base64.
var pngPixel = sync.OnceValue(func() string {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 0xff, A: 0xff})
	var b bytes.Buffer
	_ = png.Encode(&b, img) // into memory: it does not fail
	return base64.StdEncoding.EncodeToString(b.Bytes())
})

// silentWAV is a WAV file in base64: 8 kHz, mono, 8-bit PCM, 80 samples
// (10 ms) of silence.
var silentWAV = sync.OnceValue(func() string {
	const rate, samples = 8000, 80
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + samples))
	b.WriteString("WAVEfmt ")
	le(uint32(16))   // fmt chunk size
	le(uint16(1))    // PCM
	le(uint16(1))    // mono
	le(uint32(rate)) // sample rate
	le(uint32(rate)) // byte rate: rate x 1 channel x 1 byte
	le(uint16(1))    // block align
	le(uint16(8))    // bits per sample
	b.WriteString("data")
	le(uint32(samples))
	b.Write(bytes.Repeat([]byte{0x80}, samples)) // 8-bit PCM silence is 128
	return base64.StdEncoding.EncodeToString(b.Bytes())
})
