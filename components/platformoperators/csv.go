package platformoperators

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"

	"sigs.k8s.io/yaml"
)

// What Select reads from a bundle's ClusterServiceVersion: install modes,
// webhooks and owned or required APIServices.

// csvFacts are what the rules need from a bundle's ClusterServiceVersion.
type csvFacts struct {
	// installModes by type, nil when unknown.
	installModes         map[string]bool
	webhooks             []string
	ownedAPIServices     []string
	requiredAPIServices  []string
	maxOpenShiftVersions []string
}

// csvDoc is the part of a ClusterServiceVersion (or of olm.csv.metadata,
// which shares these field names) the rules read.
type csvDoc struct {
	Annotations  map[string]string `json:"annotations"`
	InstallModes []struct {
		Type      string `json:"type"`
		Supported bool   `json:"supported"`
	} `json:"installModes"`
	APIServiceDefinitions apiServiceDefinitions `json:"apiServiceDefinitions"`
}

type apiServiceDefinitions struct {
	Owned    []apiServiceDescription `json:"owned"`
	Required []apiServiceDescription `json:"required"`
}

type apiServiceDescription struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
}

func (d apiServiceDescription) String() string {
	if d.Group == "" && d.Version == "" {
		return d.Name
	}
	return d.Version + "." + d.Group
}

// csvObject is a ClusterServiceVersion (or another object) found in an
// olm.bundle.object property.
type csvObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		InstallModes []struct {
			Type      string `json:"type"`
			Supported bool   `json:"supported"`
		} `json:"installModes"`
		WebhookDefinitions []struct {
			Type         string `json:"type"`
			GenerateName string `json:"generateName"`
		} `json:"webhookdefinitions"`
		APIServiceDefinitions apiServiceDefinitions `json:"apiservicedefinitions"`
	} `json:"spec"`
}

// bundleCSV gathers csvFacts from olm.csv.metadata and the objects in
// olm.bundle.object properties; problems are rejection reasons for
// properties that do not decode.
func bundleCSV(b *Bundle) (csvFacts, []string) {
	var f csvFacts
	var problems []string
	var annotations map[string]string
	for _, p := range b.PropertiesOf(PropertyCSVMetadata) {
		var d csvDoc
		if err := json.Unmarshal(p.Value, &d); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", PropertyCSVMetadata, err))
			continue
		}
		if len(d.InstallModes) > 0 {
			f.installModes = map[string]bool{}
			for _, m := range d.InstallModes {
				f.installModes[m.Type] = f.installModes[m.Type] || m.Supported
			}
		}
		for _, a := range d.APIServiceDefinitions.Owned {
			f.ownedAPIServices = appendNew(f.ownedAPIServices, a.String())
		}
		for _, a := range d.APIServiceDefinitions.Required {
			f.requiredAPIServices = appendNew(f.requiredAPIServices, a.String())
		}
		annotations = d.Annotations
	}
	for i, p := range b.PropertiesOf(PropertyBundleObject) {
		var v struct {
			Data string `json:"data"`
		}
		if err := json.Unmarshal(p.Value, &v); err != nil {
			problems = append(problems, fmt.Sprintf("%s %d: %v", PropertyBundleObject, i, err))
			continue
		}
		data, err := base64.StdEncoding.DecodeString(v.Data)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s %d: data: %v", PropertyBundleObject, i, err))
			continue
		}
		raw, err := yaml.YAMLToJSON(data)
		var o csvObject
		if err == nil {
			err = json.Unmarshal(raw, &o)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s %d: not an object: %v", PropertyBundleObject, i, err))
			continue
		}
		switch o.Kind {
		case "ClusterServiceVersion":
			if f.installModes == nil && len(o.Spec.InstallModes) > 0 {
				f.installModes = map[string]bool{}
				for _, m := range o.Spec.InstallModes {
					f.installModes[m.Type] = f.installModes[m.Type] || m.Supported
				}
			}
			for _, w := range o.Spec.WebhookDefinitions {
				f.webhooks = appendNew(f.webhooks, fmt.Sprintf("%s %s", w.Type, w.GenerateName))
			}
			for _, a := range o.Spec.APIServiceDefinitions.Owned {
				f.ownedAPIServices = appendNew(f.ownedAPIServices, a.String())
			}
			for _, a := range o.Spec.APIServiceDefinitions.Required {
				f.requiredAPIServices = appendNew(f.requiredAPIServices, a.String())
			}
			if annotations == nil {
				annotations = o.Metadata.Annotations
			}
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			f.webhooks = appendNew(f.webhooks, o.Kind+" "+o.Metadata.Name)
		case "APIService":
			f.ownedAPIServices = appendNew(f.ownedAPIServices, o.Metadata.Name)
		}
	}
	if s, ok := annotations["olm.properties"]; ok && s != "" {
		var ps []Property
		if err := json.Unmarshal([]byte(s), &ps); err != nil {
			problems = append(problems, fmt.Sprintf("annotation olm.properties: %v", err))
		}
		for _, p := range ps {
			if p.Type == PropertyMaxOpenShiftVersion {
				f.maxOpenShiftVersions = append(f.maxOpenShiftVersions, rawString(p.Value))
			}
		}
	}
	return f, problems
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
