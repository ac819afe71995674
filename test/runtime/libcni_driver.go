// libcni-driver runs a CNI network list against a network namespace through libcni, the library
// container runtimes (CRI-O, containerd's go-cni, Multus) use: ADD, CHECK or DEL, with libcni's
// own result cache feeding prevResult to CHECK and DEL.
//
//	libcni-driver ADD|CHECK|DEL CONFLIST NETNS CONTAINER_ID IFNAME CNI_PATH CACHE_DIR
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/containernetworking/cni/libcni"
)

func main() {
	if len(os.Args) != 8 {
		fmt.Fprintln(os.Stderr, "usage: libcni-driver ADD|CHECK|DEL CONFLIST NETNS CONTAINER_ID IFNAME CNI_PATH CACHE_DIR")
		os.Exit(2)
	}
	command, conflist, netns, containerID, ifname := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5]
	list, err := libcni.ConfListFromFile(conflist)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cni := libcni.NewCNIConfigWithCacheDir(strings.Split(os.Args[6], ":"), os.Args[7], nil)
	rt := &libcni.RuntimeConf{
		ContainerID: containerID,
		NetNS:       netns,
		IfName:      ifname,
		Args:        [][2]string{{"IgnoreUnknown", "1"}, {"K8S_POD_NAMESPACE", "default"}, {"K8S_POD_NAME", "bringup"}},
	}
	ctx := context.Background()
	switch command {
	case "ADD":
		res, err := cni.AddNetworkList(ctx, list, rt)
		if err == nil {
			err = res.Print()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "CHECK":
		err = cni.CheckNetworkList(ctx, list, rt)
	case "DEL":
		err = cni.DelNetworkList(ctx, list, rt)
	default:
		err = fmt.Errorf("unknown command %q", command)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
