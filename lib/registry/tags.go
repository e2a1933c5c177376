package registry

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Tags lists the tags of repo, page by page, failing when there are more
// than max (max <= 0: no bound but the registry's pages).
func (c *Client) Tags(ctx context.Context, repo name.Repository, max int) ([]string, error) {
	p, err := remote.NewPuller(c.remote(ctx)...)
	if err != nil {
		return nil, fmt.Errorf("list tags of %s: %w", repo, err)
	}
	l, err := p.Lister(ctx, repo)
	if err != nil {
		return nil, c.explain(ctx, "list tags of", repoRef{repo}, err)
	}
	var tags []string
	for l.HasNext() {
		page, err := l.Next(ctx)
		if err != nil {
			return nil, c.explain(ctx, "list tags of", repoRef{repo}, err)
		}
		tags = append(tags, page.Tags...)
		if max > 0 && len(tags) > max {
			return nil, fmt.Errorf("list tags of %s: more than %d tags: %w", repo, max, ErrLimit)
		}
	}
	return tags, nil
}

// repoRef names a repository where errors want a reference.
type repoRef struct{ name.Repository }

func (r repoRef) Context() name.Repository { return r.Repository }
func (r repoRef) Identifier() string       { return "" }
