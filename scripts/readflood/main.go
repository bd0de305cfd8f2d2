// Command readflood measures what one user reading history as fast as 8
// connections allow costs another member: it registers alice, bob and
// mallory on the server at the URL given, stores 200 messages in mallory's
// conversation, then times 300 of bob's sends, one after another, with
// mallory's 8 readers running ("attack") or not ("quiet"). The server must
// run with --registration open --auth-rate -1 --send-rate -1 (bob sends
// faster than 50 a second); its --history-rate decides the outcome.
//
//	go run ./scripts/readflood http://127.0.0.1:8080 attack
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

var base = os.Args[1]

func post(path, tok string, body any) (int, map[string]any) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func main() {
	tok := map[string]string{}
	for _, u := range []string{"alice", "bob", "mallory"} {
		_, m := post("/v1/register", "", map[string]string{"user_id": u, "password": "password-" + u})
		tok[u] = m["token"].(string)
	}
	post("/v1/conversations", tok["mallory"], map[string]any{"type": "direct", "members": []string{"alice"}})
	post("/v1/conversations", tok["bob"], map[string]any{"type": "direct", "members": []string{"alice"}})
	for i := range 200 {
		post("/v1/conversations/dm:alice:mallory/messages", tok["mallory"], map[string]any{"message_id": fmt.Sprintf("s%d", i), "content": "filler message for history pages"})
	}
	stop := make(chan struct{})
	var pages, refused atomic.Int64
	var wg sync.WaitGroup
	if os.Args[2] == "attack" {
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := &http.Client{}
				for {
					select {
					case <-stop:
						return
					default:
					}
					req, _ := http.NewRequest("GET", base+"/v1/conversations/dm:alice:mallory/messages?limit=100", nil)
					req.Header.Set("Authorization", "Bearer "+tok["mallory"])
					resp, err := c.Do(req)
					if err != nil {
						continue
					}
					var buf [4096]byte
					for {
						if _, err := resp.Body.Read(buf[:]); err != nil {
							break
						}
					}
					resp.Body.Close()
					if resp.StatusCode == 200 {
						pages.Add(1)
					} else {
						refused.Add(1)
					}
				}
			}()
		}
	}
	time.Sleep(500 * time.Millisecond)
	var lat []time.Duration
	start := time.Now()
	for i := range 300 {
		t := time.Now()
		code, _ := post("/v1/conversations/dm:alice:bob/messages", tok["bob"], map[string]any{"message_id": fmt.Sprintf("b%d", i), "content": "hi"})
		if code != 201 {
			panic(code)
		}
		lat = append(lat, time.Since(t))
	}
	el := time.Since(start)
	close(stop)
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Printf("%s: bob's sends p50 %.1f ms p90 %.1f ms; mallory's history pages served %.0f/s, refused %.0f/s\n", os.Args[2], float64(lat[150].Microseconds())/1000, float64(lat[270].Microseconds())/1000, float64(pages.Load())/el.Seconds(), float64(refused.Load())/el.Seconds())
}
