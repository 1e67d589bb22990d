package kubernetes

import (
	"bytes"
	"encoding/base64"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite audit-scenario.yaml from the repository's testdata")

// The scenario and the data file the ConfigMap carries, relative to this
// directory.
const (
	scenarioFile = "../../testdata/digits-sgld.yaml"
	dataFile     = "../../testdata/digits.csv.gz"
)

// renderConfigMap writes the ConfigMap audit-scenario: the scenario as text
// and its CSV data as binaryData, under the names the scenario uses.
func renderConfigMap(scenario, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`# The scenario of the Kubernetes example and its data, mounted at /scenario in
# the shard pods: scenario.yaml is testdata/digits-sgld.yaml, and digits.csv.gz,
# the file its data.csv.path names relative to itself, is testdata/digits.csv.gz
# as binaryData (base64). Generated: in examples/kubernetes, run
#   go test -run TestConfigMapIsTestdata -update
# For a scenario of your own, make the same ConfigMap with kubectl:
#   kubectl create configmap audit-scenario --from-file=scenario.yaml=my.yaml \
#     --from-file=my-data.csv.gz --dry-run=client -o yaml > audit-scenario.yaml
# A ConfigMap holds at most 1 MiB; larger data goes on the claim audit-results.
apiVersion: v1
kind: ConfigMap
metadata:
  name: audit-scenario
  labels:
    app.kubernetes.io/name: mcmcaudit
data:
  scenario.yaml: |
`)
	for _, line := range strings.SplitAfter(strings.TrimSuffix(string(scenario), "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString("    " + strings.TrimSuffix(line, "\n") + "\n")
	}
	b.WriteString("binaryData:\n  digits.csv.gz: " + base64.StdEncoding.EncodeToString(data) + "\n")
	return b.Bytes()
}

func readExampleT(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := readExample(".")
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// Every manifest decodes strictly into its API type, and the example has
// the objects it is meant to have.
func TestManifestsDecodeStrictly(t *testing.T) {
	ex, errs := decodeExample(readExampleT(t))
	for _, err := range errs {
		t.Error(err)
	}
	if len(ex.jobs) != 2 || len(ex.pvcs) != 1 || len(ex.cms) != 1 {
		t.Errorf("decoded %d Jobs, %d PersistentVolumeClaims, %d ConfigMaps; want 2, 1, 1", len(ex.jobs), len(ex.pvcs), len(ex.cms))
	}
}

// The manifests, the Dockerfile and run.sh agree with each other.
func TestReferences(t *testing.T) {
	ex, errs := decodeExample(readExampleT(t))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, err := range checkExample(ex) {
		t.Error(err)
	}
}

// The ConfigMap carries exactly the repository's scenario and data file.
func TestConfigMapIsTestdata(t *testing.T) {
	scenario, err := os.ReadFile(scenarioFile)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(dataFile)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("audit-scenario.yaml", renderConfigMap(scenario, data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ex, errs := decodeExample(readExampleT(t))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	cm, ok := ex.cms["audit-scenario"]
	if !ok {
		t.Fatal("no ConfigMap audit-scenario")
	}
	if cm.Data["scenario.yaml"] != string(scenario) {
		t.Errorf("scenario.yaml differs from %s: run go test -run TestConfigMapIsTestdata -update", scenarioFile)
	}
	if !bytes.Equal(cm.BinaryData["digits.csv.gz"], data) {
		t.Errorf("digits.csv.gz differs from %s (%d vs %d bytes): run go test -run TestConfigMapIsTestdata -update", dataFile, len(cm.BinaryData["digits.csv.gz"]), len(data))
	}
	if n := len(cm.Data) + len(cm.BinaryData); n != 2 {
		t.Errorf("ConfigMap has %d keys, want 2", n)
	}
}

// Each broken reference is reported: the checks can fail.
func TestBrokenReferencesAreCaught(t *testing.T) {
	cases := []struct {
		name, file, old, new, want string
	}{
		{"unknown field", "audit-indexed-job.yaml", "backoffLimitPerIndex: 2", "backoffLimitPerIndx: 2", "unknown field"},
		{"wrong type", "audit-merge-job.yaml", "\n  backoffLimit: 0", "\n  backoffLimit: none", "backoffLimit"},
		{"bad quantity", "audit-results-pvc.yaml", "storage: 1Gi", "storage: 1 GB", "quantities must match"},
		{"claim name in shard job", "audit-indexed-job.yaml", "claimName: audit-results", "claimName: audit-result", `claim "audit-result"`},
		{"claim name in merge job", "audit-merge-job.yaml", "claimName: audit-results", "claimName: results", `claim "results"`},
		{"claim not shared", "audit-results-pvc.yaml", "[ReadWriteMany]", "[ReadWriteOnce]", "ReadWriteMany"},
		{"ConfigMap name", "audit-indexed-job.yaml", "name: audit-scenario", "name: scenario", `ConfigMap "scenario"`},
		{"scenario key", "audit-indexed-job.yaml", "- /scenario/scenario.yaml", "- /scenario/config.yaml", "not a text key"},
		{"scenario mount", "audit-indexed-job.yaml", "mountPath: /scenario", "mountPath: /config", "not in a mounted ConfigMap"},
		{"data key", "audit-scenario.yaml", "\n  digits.csv.gz: ", "\n  digits.csv: ", "data.csv.path"},
		{"volume name", "audit-indexed-job.yaml", "- name: results\n              mountPath", "- name: result\n              mountPath", `volume "result"`},
		{"completions", "audit-indexed-job.yaml", "completions: 8", "completions: 6", "N = 8 but completions is 6"},
		{"shard count", "audit-indexed-job.yaml", "$(SHARD)/8", "$(SHARD)/16", "N = 16"},
		{"index variable", "audit-indexed-job.yaml", "- name: SHARD", "- name: INDEX", "$(SHARD)"},
		{"index source", "audit-indexed-job.yaml", "job-completion-index", "job-index", "completion index"},
		{"missing part", "audit-merge-job.yaml", "            - /results/part-7\n", "", "does not read the part part-7"},
		{"foreign part", "audit-merge-job.yaml", "/results/part-3", "/results/part-03", "not a part"},
		{"part written elsewhere", "audit-indexed-job.yaml", "/results/part-$(SHARD)", "/results/shard-$(SHARD)", "not a part"},
		{"image", "audit-merge-job.yaml", "image: REGISTRY/mcmcaudit:VERSION", "image: REGISTRY/mcmcaudit:OTHER", "differs"},
		{"pull policy", "audit-merge-job.yaml", "          imagePullPolicy: IfNotPresent\n", "", "imagePullPolicy must be set"},
		{"restart policy", "audit-indexed-job.yaml", "restartPolicy: Never", "restartPolicy: OnFailure", "restartPolicy"},
		{"deadline", "audit-merge-job.yaml", "  activeDeadlineSeconds: 3600\n", "", "activeDeadlineSeconds"},
		{"shell command", "audit-indexed-job.yaml", `command: ["/usr/local/bin/audit"]`, `command: ["/bin/sh", "-c"]`, "command must be"},
		{"binary path", "Dockerfile", "/out/audit /usr/local/bin/audit", "/out/audit /audit", "ENTRYPOINT runs"},
		{"failure policy container", "audit-indexed-job.yaml", "containerName: audit", "containerName: shard", `container "shard"`},
		{"run.sh manifest", "run.sh", "with_image audit-merge-job.yaml", "with_image audit-merge.yaml", "audit-merge.yaml, which does not exist"},
		{"run.sh wait", "run.sh", "wait_job audit-shards ", "wait_job shards ", "never waits for job/audit-shards"},
	}
	clean := readExampleT(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{}
			for k, v := range clean {
				files[k] = v
			}
			if n := bytes.Count(files[tc.file], []byte(tc.old)); n < 1 {
				t.Fatalf("%q does not occur in %s", tc.old, tc.file)
			}
			files[tc.file] = bytes.Replace(files[tc.file], []byte(tc.old), []byte(tc.new), 1)
			ex, errs := decodeExample(files)
			if len(errs) == 0 {
				errs = checkExample(ex)
			}
			for _, err := range errs {
				if strings.Contains(err.Error(), tc.want) {
					return
				}
			}
			t.Errorf("no error mentions %q; got %v", tc.want, errs)
		})
	}
}
