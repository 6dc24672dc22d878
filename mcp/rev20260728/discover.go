package rev20260728

import "errors"

// DiscoverParams are the params of server/discover: only _meta
// (2026-07-28 server/discover, "Request").
type DiscoverParams struct {
	Meta *RequestMeta `json:"_meta,omitempty"`
}

// DiscoverResult is the result of server/discover (2026-07-28
// server/discover, "Response"; schema.ts DiscoverResult). It is a
// cacheable result, so TTLMs and CacheScope are required (schema.ts
// CacheableResult); the server's identity travels in _meta, not in a
// member of its own.
type DiscoverResult struct {
	ResultType        ResultType         `json:"resultType"`
	Meta              *ResultMeta        `json:"_meta,omitempty"`
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
	TTLMs             int64              `json:"ttlMs"`
	CacheScope        CacheScope         `json:"cacheScope"`
}

// Validate checks what the schema requires of a DiscoverResult: resultType
// "complete", at least one supported version, a ttlMs of 0 or more and a
// known cache scope.
func (r *DiscoverResult) Validate() error {
	switch {
	case r.ResultType != ResultComplete:
		return errors.New(`server/discover: resultType must be "complete"`)
	case len(r.SupportedVersions) == 0:
		return errors.New("server/discover: supportedVersions is empty")
	case r.TTLMs < 0:
		return errors.New("server/discover: ttlMs must not be negative")
	case r.CacheScope != CacheScopePublic && r.CacheScope != CacheScopePrivate:
		return errors.New(`server/discover: cacheScope must be "public" or "private"`)
	}
	return nil
}
