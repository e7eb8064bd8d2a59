UPDATE change_points SET status = 'acked', note = $note, acked_at = timezone('UTC', now())
WHERE change_id = $change_id
