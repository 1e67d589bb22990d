package kubernetes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// placeholderImage is the image reference of the manifests, which run.sh
// replaces with the user's image.
const placeholderImage = "REGISTRY/mcmcaudit:VERSION"

// example is the decoded Kubernetes example: its manifests by name and the
// other files (Dockerfile, run.sh) by file name.
type example struct {
	jobs  map[string]*batchv1.Job
	pvcs  map[string]*corev1.PersistentVolumeClaim
	cms   map[string]*corev1.ConfigMap
	file  map[string]string // manifest name → file it came from
	files map[string][]byte
}

// readExample reads the files of the example directory: every manifest
// (*.yaml), the Dockerfile and run.sh.
func readExample(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !(strings.HasSuffix(n, ".yaml") || n == "Dockerfile" || n == "run.sh") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		files[n] = b
	}
	return files, nil
}

// documents splits a YAML stream at its "---" lines and drops empty
// documents (comments only).
func documents(b []byte) [][]byte {
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---[ \t]*$`).Split(string(b), -1) {
		empty := true
		for _, line := range strings.Split(d, "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				empty = false
				break
			}
		}
		if !empty {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

// decodeExample decodes every manifest strictly (unknown or duplicated
// fields are errors) into the Kubernetes API type its apiVersion and kind
// name.
func decodeExample(files map[string][]byte) (*example, []error) {
	ex := &example{
		jobs:  map[string]*batchv1.Job{},
		pvcs:  map[string]*corev1.PersistentVolumeClaim{},
		cms:   map[string]*corev1.ConfigMap{},
		file:  map[string]string{},
		files: files,
	}
	var errs []error
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, fn := range names {
		if !strings.HasSuffix(fn, ".yaml") {
			continue
		}
		docs := documents(files[fn])
		if len(docs) == 0 {
			errs = append(errs, fmt.Errorf("%s: no manifest", fn))
		}
		for i, doc := range docs {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				errs = append(errs, fmt.Errorf("%s: document %d: %v", fn, i, err))
				continue
			}
			var obj interface{ GetName() string }
			switch tm.APIVersion + " " + tm.Kind {
			case "batch/v1 Job":
				obj = &batchv1.Job{}
			case "v1 PersistentVolumeClaim":
				obj = &corev1.PersistentVolumeClaim{}
			case "v1 ConfigMap":
				obj = &corev1.ConfigMap{}
			default:
				errs = append(errs, fmt.Errorf("%s: document %d: unexpected apiVersion %q kind %q", fn, i, tm.APIVersion, tm.Kind))
				continue
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %v", fn, tm.Kind, err))
				continue
			}
			name := obj.GetName()
			for _, msg := range validation.IsDNS1123Subdomain(name) {
				errs = append(errs, fmt.Errorf("%s: %s name %q: %s", fn, tm.Kind, name, msg))
			}
			key := tm.Kind + "/" + name
			if prev, dup := ex.file[key]; dup {
				errs = append(errs, fmt.Errorf("%s: %s is also defined in %s", fn, key, prev))
				continue
			}
			ex.file[key] = fn
			switch o := obj.(type) {
			case *batchv1.Job:
				ex.jobs[name] = o
			case *corev1.PersistentVolumeClaim:
				ex.pvcs[name] = o
			case *corev1.ConfigMap:
				ex.cms[name] = o
			}
		}
	}
	return ex, errs
}

// errorList collects the findings of the reference checks.
type errorList []error

func (l *errorList) add(format string, args ...any) { *l = append(*l, fmt.Errorf(format, args...)) }

// mountOf is where a path used by a container lives: the mount whose
// mountPath is the longest prefix of the path, and the path inside it.
func mountOf(c *corev1.Container, p string) (*corev1.VolumeMount, string) {
	var best *corev1.VolumeMount
	rel := ""
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		mp := strings.TrimSuffix(m.MountPath, "/")
		if strings.HasPrefix(p, mp+"/") && (best == nil || len(mp) > len(strings.TrimSuffix(best.MountPath, "/"))) {
			best, rel = m, strings.TrimPrefix(p, mp+"/")
		}
	}
	return best, rel
}

// volumeOf returns the pod volume a mount refers to.
func volumeOf(spec *corev1.PodSpec, m *corev1.VolumeMount) *corev1.Volume {
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == m.Name {
			return &spec.Volumes[i]
		}
	}
	return nil
}

// configMapKey returns the ConfigMap key a projected path refers to: the
// path itself, or the key whose item path it is.
func configMapKey(src *corev1.ConfigMapVolumeSource, rel string) string {
	if len(src.Items) == 0 {
		return rel
	}
	for _, it := range src.Items {
		if it.Path == rel {
			return it.Key
		}
	}
	return ""
}

// flagValue returns the value of --name (or -name) in args, as separate
// argument or after "=".
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		for _, p := range []string{"--" + name, "-" + name} {
			if a == p && i+1 < len(args) {
				return args[i+1], true
			}
			if strings.HasPrefix(a, p+"=") {
				return strings.TrimPrefix(a, p+"="), true
			}
		}
	}
	return "", false
}

// positionals returns the arguments after the subcommand that come before
// the first flag.
func positionals(args []string) []string {
	var out []string
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") {
			break
		}
		out = append(out, a)
	}
	return out
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// dockerfileBinary returns the path the final stage copies the binary to
// and the ENTRYPOINT's program.
func dockerfileBinary(df string) (copied, entry string, err error) {
	for _, line := range strings.Split(df, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			copied, entry = "", ""
		case "COPY":
			if len(f) == 4 && strings.HasPrefix(f[1], "--from=") {
				copied = f[3]
			}
		case "ENTRYPOINT":
			var ep []string
			if err := json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), f[0]))), &ep); err != nil || len(ep) == 0 {
				return "", "", fmt.Errorf("Dockerfile: ENTRYPOINT must be an exec-form JSON array (no shell in the image): %s", line)
			}
			entry = ep[0]
		}
	}
	if copied == "" || entry == "" {
		return "", "", fmt.Errorf("Dockerfile: the final stage must COPY --from the binary and set ENTRYPOINT")
	}
	return copied, entry, nil
}

// shardJob is what the checks learn from the Indexed Job: the shard count
// and where its parts go.
type shardJob struct {
	name     string
	n        int
	claim    string // claim the parts are written to
	outTmpl  string // part path inside the claim, with the index as $(VAR)
	indexVar string
}

// checkExample checks the references between the decoded manifests, the
// Dockerfile and run.sh.
func checkExample(ex *example) []error {
	var errs errorList
	binary, entry, err := dockerfileBinary(string(ex.files["Dockerfile"]))
	if err != nil {
		errs = append(errs, err)
	} else if binary != entry {
		errs.add("Dockerfile: the binary is copied to %s but ENTRYPOINT runs %s", binary, entry)
	}

	var image string
	var shards []shardJob
	var merges []*batchv1.Job
	jobNames := make([]string, 0, len(ex.jobs))
	for n := range ex.jobs {
		jobNames = append(jobNames, n)
	}
	sort.Strings(jobNames)
	for _, jn := range jobNames {
		job := ex.jobs[jn]
		where := ex.file["Job/"+jn] + ": job/" + jn
		spec := &job.Spec.Template.Spec
		if spec.RestartPolicy != corev1.RestartPolicyNever {
			errs.add("%s: restartPolicy must be Never (a container's exit code is its result), got %q", where, spec.RestartPolicy)
		}
		if job.Spec.ActiveDeadlineSeconds == nil || *job.Spec.ActiveDeadlineSeconds <= 0 {
			errs.add("%s: activeDeadlineSeconds must bound the Job", where)
		}
		if job.Spec.BackoffLimitPerIndex != nil && (job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion) {
			errs.add("%s: backoffLimitPerIndex needs completionMode Indexed", where)
		}
		// Volumes and mounts refer to each other by name.
		used := map[string]bool{}
		for ci := range spec.Containers {
			c := &spec.Containers[ci]
			paths := map[string]bool{}
			for _, m := range c.VolumeMounts {
				if volumeOf(spec, &m) == nil {
					errs.add("%s: container %s mounts volume %q, which the pod does not declare", where, c.Name, m.Name)
				}
				if paths[m.MountPath] {
					errs.add("%s: container %s mounts twice at %s", where, c.Name, m.MountPath)
				}
				paths[m.MountPath] = true
				used[m.Name] = true
			}
		}
		for _, v := range spec.Volumes {
			if !used[v.Name] {
				errs.add("%s: volume %q is mounted by no container", where, v.Name)
			}
			if v.PersistentVolumeClaim != nil {
				pvc, ok := ex.pvcs[v.PersistentVolumeClaim.ClaimName]
				if !ok {
					errs.add("%s: volume %q uses claim %q, which no manifest defines", where, v.Name, v.PersistentVolumeClaim.ClaimName)
				} else if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
					errs.add("%s: claim %q is shared by pods on several nodes and must be ReadWriteMany, got %v", where, pvc.Name, pvc.Spec.AccessModes)
				}
			}
			if v.ConfigMap != nil {
				cm, ok := ex.cms[v.ConfigMap.Name]
				if !ok {
					errs.add("%s: volume %q uses ConfigMap %q, which no manifest defines", where, v.Name, v.ConfigMap.Name)
				} else {
					for _, it := range v.ConfigMap.Items {
						if !hasKey(cm, it.Key) {
							errs.add("%s: volume %q projects key %q, which ConfigMap %s lacks", where, v.Name, it.Key, cm.Name)
						}
					}
				}
			}
		}
		if p := job.Spec.PodFailurePolicy; p != nil {
			for _, r := range p.Rules {
				if r.OnExitCodes != nil && r.OnExitCodes.ContainerName != nil && !slices.ContainsFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == *r.OnExitCodes.ContainerName }) {
					errs.add("%s: podFailurePolicy names container %q, which the pod lacks", where, *r.OnExitCodes.ContainerName)
				}
			}
		}
		for ci := range spec.Containers {
			c := &spec.Containers[ci]
			cw := where + " container " + c.Name
			if image == "" {
				image = c.Image
			} else if c.Image != image {
				errs.add("%s: image %q differs from the other containers' %q", cw, c.Image, image)
			}
			if c.ImagePullPolicy == "" {
				errs.add("%s: imagePullPolicy must be set (the default depends on the tag)", cw)
			} else if c.ImagePullPolicy == corev1.PullAlways {
				errs.add("%s: imagePullPolicy Always pulls on every pod", cw)
			}
			if strings.HasSuffix(c.Image, ":latest") || !strings.Contains(path.Base(c.Image), ":") {
				errs.add("%s: image %q needs a version tag", cw, c.Image)
			}
			if len(c.Command) != 1 || c.Command[0] != binary {
				errs.add("%s: command must be [%q], the binary of the Dockerfile, got %q", cw, binary, c.Command)
			}
			env := map[string]corev1.EnvVar{}
			for _, e := range c.Env {
				env[e.Name] = e
			}
			for _, a := range append(slices.Clone(c.Command), c.Args...) {
				for _, m := range varRef.FindAllStringSubmatch(a, -1) {
					if _, ok := env[m[1]]; !ok {
						errs.add("%s: argument %q refers to $(%s), which the container does not define (Kubernetes would pass it verbatim)", cw, a, m[1])
					}
				}
			}
			if len(c.Args) == 0 {
				errs.add("%s: no arguments", cw)
				continue
			}
			switch c.Args[0] {
			case "run":
				if s, ok := checkShardContainer(&errs, ex, job, c, env, cw); ok {
					shards = append(shards, s)
				}
			case "merge":
				merges = append(merges, job)
			default:
				errs.add("%s: the first argument must be the audit subcommand run or merge, got %q", cw, c.Args[0])
			}
		}
	}
	if image != placeholderImage {
		errs.add("the Jobs' image must be the placeholder %q that run.sh replaces, got %q", placeholderImage, image)
	}
	if len(shards) != 1 || len(merges) != 1 {
		errs.add("the example needs one shard Job and one merge Job, found %d and %d", len(shards), len(merges))
	} else {
		checkMerge(&errs, ex, merges[0], shards[0])
	}
	checkRunScript(&errs, ex)
	return errs
}

func hasKey(cm *corev1.ConfigMap, key string) bool {
	_, a := cm.Data[key]
	_, b := cm.BinaryData[key]
	return a || b
}

// checkShardContainer checks the shard command of an Indexed Job: the shard
// count equals completions, the index comes from the completion index, the
// scenario and its data are keys of the mounted ConfigMap, and the part goes
// to a shared claim.
func checkShardContainer(errs *errorList, ex *example, job *batchv1.Job, c *corev1.Container, env map[string]corev1.EnvVar, cw string) (shardJob, bool) {
	s := shardJob{name: job.Name}
	spec := &job.Spec.Template.Spec
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		errs.add("%s: a shard Job must be completionMode Indexed", cw)
		return s, false
	}
	if job.Spec.Completions == nil || *job.Spec.Completions < 1 {
		errs.add("%s: completions must be set", cw)
		return s, false
	}
	if job.Spec.Parallelism != nil && *job.Spec.Parallelism > *job.Spec.Completions {
		errs.add("%s: parallelism %d exceeds completions %d", cw, *job.Spec.Parallelism, *job.Spec.Completions)
	}
	for _, f := range []string{"json", "csv", "plot", "html", "checkpoint"} {
		if _, ok := flagValue(c.Args, f); ok {
			errs.add("%s: --%s is not allowed with --shard", cw, f)
		}
	}
	shard, ok := flagValue(c.Args, "shard")
	m := regexp.MustCompile(`^\$\(([A-Za-z_][A-Za-z0-9_]*)\)/([0-9]+)$`).FindStringSubmatch(shard)
	if !ok || m == nil {
		errs.add("%s: --shard must be $(VAR)/N, got %q", cw, shard)
		return s, false
	}
	s.indexVar = m[1]
	s.n, _ = strconv.Atoi(m[2])
	if int32(s.n) != *job.Spec.Completions {
		errs.add("%s: --shard %s has N = %d but completions is %d", cw, shard, s.n, *job.Spec.Completions)
	}
	if e, ok := env[s.indexVar]; ok {
		want := "metadata.annotations['" + batchv1.JobCompletionIndexAnnotation + "']"
		if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != want {
			errs.add("%s: %s must come from the completion index, fieldRef %s", cw, s.indexVar, want)
		}
	}
	// The scenario and the files it names are keys of a mounted ConfigMap.
	pos := positionals(c.Args)
	if len(pos) != 1 {
		errs.add("%s: audit run takes one scenario file, got %q", cw, pos)
		return s, false
	}
	scenario := pos[0]
	mnt, rel := mountOf(c, scenario)
	var cm *corev1.ConfigMap
	var src *corev1.ConfigMapVolumeSource
	if mnt != nil {
		if v := volumeOf(spec, mnt); v != nil && v.ConfigMap != nil {
			src, cm = v.ConfigMap, ex.cms[v.ConfigMap.Name]
		}
	}
	if cm == nil {
		errs.add("%s: the scenario %s is not in a mounted ConfigMap", cw, scenario)
	} else if key := configMapKey(src, rel); key == "" || cm.Data[key] == "" {
		errs.add("%s: the scenario %s is not a text key of ConfigMap %s", cw, scenario, cm.Name)
	} else {
		var sc struct {
			Data struct {
				CSV *struct {
					Path string `json:"path"`
				} `json:"csv"`
			} `json:"data"`
		}
		if err := yaml.Unmarshal([]byte(cm.Data[key]), &sc); err != nil {
			errs.add("%s: ConfigMap %s key %s: %v", cw, cm.Name, key, err)
		} else if sc.Data.CSV != nil {
			// Relative data paths are read next to the scenario file.
			p := sc.Data.CSV.Path
			if !path.IsAbs(p) {
				p = path.Join(path.Dir(scenario), p)
			}
			dm, drel := mountOf(c, p)
			if dm == nil || dm.Name != mnt.Name || !hasKey(cm, configMapKey(src, drel)) {
				errs.add("%s: the scenario's data.csv.path %q resolves to %s, which is not a key of ConfigMap %s", cw, sc.Data.CSV.Path, p, cm.Name)
			}
		}
	}
	// The part goes to a claim shared with the merge.
	out, ok := flagValue(c.Args, "out")
	if !ok || !strings.Contains(out, "$("+s.indexVar+")") {
		errs.add("%s: --out must contain the index $(%s), got %q", cw, s.indexVar, out)
		return s, false
	}
	om, orel := mountOf(c, out)
	var v *corev1.Volume
	if om != nil {
		v = volumeOf(spec, om)
	}
	if v == nil || v.PersistentVolumeClaim == nil || om.ReadOnly {
		errs.add("%s: --out %s is not on a writable claim", cw, out)
		return s, false
	}
	s.claim, s.outTmpl = v.PersistentVolumeClaim.ClaimName, orel
	return s, true
}

// checkMerge checks that the merge reads exactly the parts the shards write,
// from the same claim, and writes its reports to a writable mount.
func checkMerge(errs *errorList, ex *example, job *batchv1.Job, s shardJob) {
	spec := &job.Spec.Template.Spec
	c := &spec.Containers[0]
	cw := ex.file["Job/"+job.Name] + ": job/" + job.Name + " container " + c.Name
	if job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit != 0 {
		errs.add("%s: backoffLimit must be 0: the exit code is a verdict, not a transient failure", cw)
	}
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil {
			errs.add("%s: the merge needs only the parts, yet mounts ConfigMap %s", cw, v.ConfigMap.Name)
		}
	}
	want := map[string]bool{}
	for k := 0; k < s.n; k++ {
		want[strings.ReplaceAll(s.outTmpl, "$("+s.indexVar+")", strconv.Itoa(k))] = true
	}
	seen := map[string]bool{}
	for _, p := range positionals(c.Args) {
		m, rel := mountOf(c, p)
		var v *corev1.Volume
		if m != nil {
			v = volumeOf(spec, m)
		}
		switch {
		case v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != s.claim:
			errs.add("%s: part %s is not on claim %s, where job/%s writes its parts", cw, p, s.claim, s.name)
		case !want[rel]:
			errs.add("%s: %s is not a part that job/%s writes (%s with index 0..%d)", cw, p, s.name, s.outTmpl, s.n-1)
		case seen[rel]:
			errs.add("%s: part %s is listed twice", cw, p)
		}
		seen[rel] = true
	}
	for rel := range want {
		if !seen[rel] {
			errs.add("%s: the merge does not read the part %s that job/%s writes", cw, rel, s.name)
		}
	}
	for _, f := range []string{"json", "csv", "plot", "html"} {
		if p, ok := flagValue(c.Args, f); ok && p != "-" {
			if m, _ := mountOf(c, p); m == nil || m.ReadOnly {
				errs.add("%s: --%s %s is not on a writable volume", cw, f, p)
			}
		}
	}
}

// checkRunScript checks that run.sh applies every manifest, waits for every
// Job and replaces the image placeholder.
func checkRunScript(errs *errorList, ex *example) {
	sh, ok := ex.files["run.sh"]
	if !ok {
		errs.add("run.sh is missing")
		return
	}
	text := string(sh)
	for key, fn := range ex.file {
		if !bytes.Contains(sh, []byte(fn)) {
			errs.add("run.sh never applies %s (%s)", fn, key)
		}
	}
	for _, fn := range regexp.MustCompile(`[A-Za-z0-9_.-]+\.yaml`).FindAllString(text, -1) {
		if _, ok := ex.files[fn]; !ok {
			errs.add("run.sh refers to %s, which does not exist", fn)
		}
	}
	for name := range ex.jobs {
		if !strings.Contains(text, "wait_job "+name+" ") {
			errs.add("run.sh never waits for job/%s", name)
		}
	}
	if !strings.Contains(text, "s|"+placeholderImage+"|") {
		errs.add("run.sh does not replace the image placeholder %s", placeholderImage)
	}
}
