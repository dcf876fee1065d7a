-- SPDX-License-Identifier: MIT
-- pipeline.lua: wrk sends DEPTH requests for the URL's path in one write on each connection,
-- then the next DEPTH once all of their responses are in (issue 12's pipelined case).
--   wrk -t1 -c50 -d5s -s bench/load/wrk/pipeline.lua http://127.0.0.1:8080/json -- 16
-- DEPTH is the script's first argument (default 16). wrk counts every response as a request;
-- its latency figures are per batch (from the write to the batch's last response).
local depth = 16

init = function(args)
	depth = tonumber(args[1]) or 16
	local r = {}
	for i = 1, depth do
		r[i] = wrk.format(nil, nil)
	end
	req = table.concat(r)
end

request = function()
	return req
end
