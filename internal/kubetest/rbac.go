package kubetest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
)

// Admin is a client of the test cluster as its administrator.
func Admin(c *Cluster) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// Grant applies an RBAC manifest (service accounts, roles, cluster roles
// and their bindings, as docs/kubernetes-rbac.yaml holds) as the
// administrator, creating the namespaces it names and their default
// service account (a cluster's controller manager would; the test cluster
// has none), and replacing objects already there.
func Grant(c *Cluster, manifest []byte) error {
	cs, err := Admin(c)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	objs, err := decodeAll(manifest)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if ns := o.(metav1.Object).GetNamespace(); ns != "" {
			if err := ensureNamespace(ctx, cs, ns); err != nil {
				return err
			}
		}
		if err := apply(ctx, cs, o); err != nil {
			return err
		}
	}
	return nil
}

func decodeAll(manifest []byte) ([]runtime.Object, error) {
	var objs []runtime.Object
	r := utilyaml.NewYAMLReader(bufioReader(manifest))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		o, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("manifest: %w", err)
		}
		objs = append(objs, o)
	}
}

func ensureNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	_, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: default service account: %w", ns, err)
	}
	return nil
}

func apply(ctx context.Context, cs kubernetes.Interface, o runtime.Object) error {
	create := metav1.CreateOptions{}
	var err error
	switch o := o.(type) {
	case *corev1.ServiceAccount:
		_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, create)
	case *rbacv1.Role:
		api := cs.RbacV1().Roles(o.Namespace)
		if _, err = api.Create(ctx, o, create); apierrors.IsAlreadyExists(err) {
			var old *rbacv1.Role
			if old, err = api.Get(ctx, o.Name, metav1.GetOptions{}); err == nil {
				old.Rules = o.Rules
				_, err = api.Update(ctx, old, metav1.UpdateOptions{})
			}
		}
	case *rbacv1.RoleBinding:
		_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, create)
	case *rbacv1.ClusterRole:
		api := cs.RbacV1().ClusterRoles()
		if _, err = api.Create(ctx, o, create); apierrors.IsAlreadyExists(err) {
			var old *rbacv1.ClusterRole
			if old, err = api.Get(ctx, o.Name, metav1.GetOptions{}); err == nil {
				old.Rules = o.Rules
				_, err = api.Update(ctx, old, metav1.UpdateOptions{})
			}
		}
	case *rbacv1.ClusterRoleBinding:
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, create)
	default:
		return fmt.Errorf("manifest: %T is not an RBAC object", o)
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("manifest: %s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.(metav1.Object).GetName(), err)
	}
	return nil
}

// Revoke deletes the roles and bindings of manifest (not the namespaces
// and service accounts, which the next Grant reuses).
func Revoke(c *Cluster, manifest []byte) error {
	cs, err := Admin(c)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	objs, err := decodeAll(manifest)
	if err != nil {
		return err
	}
	var errs []error
	del := metav1.DeleteOptions{}
	for _, o := range objs {
		m := o.(metav1.Object)
		switch o.(type) {
		case *rbacv1.Role:
			err = cs.RbacV1().Roles(m.GetNamespace()).Delete(ctx, m.GetName(), del)
		case *rbacv1.RoleBinding:
			err = cs.RbacV1().RoleBindings(m.GetNamespace()).Delete(ctx, m.GetName(), del)
		case *rbacv1.ClusterRole:
			err = cs.RbacV1().ClusterRoles().Delete(ctx, m.GetName(), del)
		case *rbacv1.ClusterRoleBinding:
			err = cs.RbacV1().ClusterRoleBindings().Delete(ctx, m.GetName(), del)
		default:
			continue
		}
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ServiceAccountKubeconfig writes, into dir, a kubeconfig for the test
// cluster that authenticates as service account name of namespace ns
// (with a token the API server issues for an hour), and returns its path.
func ServiceAccountKubeconfig(c *Cluster, ns, name, dir string) (string, error) {
	cs, err := Admin(c)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hour := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for %s/%s: %w", ns, name, err)
	}
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		return "", err
	}
	for _, a := range cfg.AuthInfos {
		a.Token = tr.Status.Token
	}
	for _, x := range cfg.Contexts {
		x.Namespace = ns
	}
	p := filepath.Join(dir, name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		return "", err
	}
	return p, os.Chmod(p, 0o600)
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
