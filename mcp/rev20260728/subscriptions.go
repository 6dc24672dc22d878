package rev20260728

import (
	"encoding/json"
	"slices"
)

// SubscriptionFilter says which notifications a subscriptions/listen
// stream carries; each kind is opt-in and the server MUST NOT send a kind
// the client did not ask for (2026-07-28 Subscriptions, "Notification
// Filter"). The acknowledgement carries the same shape with the subset the
// server agreed to. Extensions add members (the tasks extension adds
// taskIds); they are kept in Extra and read by the extension's package.
type SubscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

var filterKeys = []string{"toolsListChanged", "promptsListChanged", "resourcesListChanged", "resourceSubscriptions"}

// MarshalJSON implements json.Marshaler.
func (f SubscriptionFilter) MarshalJSON() ([]byte, error) {
	type plain SubscriptionFilter
	return marshalMeta(plain(f), f.Extra)
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *SubscriptionFilter) UnmarshalJSON(b []byte) error {
	type plain SubscriptionFilter
	var p plain
	extra, err := unmarshalMeta(b, &p, filterKeys)
	if err != nil {
		return err
	}
	*f = SubscriptionFilter(p)
	f.Extra = extra
	return nil
}

// Wants reports whether the core part of f asks for a notification of
// method about uri (uri matters for notifications/resources/updated only).
// A method the core does not filter (an extension's) is never wanted here;
// its extension decides.
func (f SubscriptionFilter) Wants(method, uri string) bool {
	switch method {
	case NotificationToolsListChanged:
		return f.ToolsListChanged
	case NotificationPromptsListChanged:
		return f.PromptsListChanged
	case NotificationResourcesListChanged:
		return f.ResourcesListChanged
	case NotificationResourcesUpdated:
		return slices.Contains(f.ResourceSubscriptions, uri)
	}
	return false
}

// ListenParams are the params of subscriptions/listen (schema.ts
// SubscriptionsListenRequestParams).
type ListenParams struct {
	Meta          *RequestMeta       `json:"_meta,omitempty"`
	Notifications SubscriptionFilter `json:"notifications"`
}

// ListenResult ends a listen stream gracefully: the response to the listen
// request, whose _meta names the subscription it closes (2026-07-28
// Subscriptions, "Graceful Closure"). A stream that closes without it was
// cut.
type ListenResult struct {
	ResultType ResultType `json:"resultType"`
	Meta       ResultMeta `json:"_meta"`
}

// AcknowledgedParams are the params of
// notifications/subscriptions/acknowledged: the subset of the filter the
// server agreed to honour. It MUST be the first message of the
// subscription (2026-07-28 Subscriptions, "Acknowledgment").
type AcknowledgedParams struct {
	Meta          *NotificationMeta  `json:"_meta,omitempty"`
	Notifications SubscriptionFilter `json:"notifications"`
}

// ListChangedParams are the params of the list_changed notifications.
type ListChangedParams struct {
	Meta *NotificationMeta `json:"_meta,omitempty"`
}

// ResourceUpdatedParams are the params of notifications/resources/updated.
type ResourceUpdatedParams struct {
	Meta *NotificationMeta `json:"_meta,omitempty"`
	URI  string            `json:"uri"`
}
