SELECT count(*) AS ios FROM timeline_ios
